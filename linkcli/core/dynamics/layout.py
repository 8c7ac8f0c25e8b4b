"""Column and row indices of the packed kernel arrays (see :mod:`.model` for the arrays)."""

# joints: ji (n_j, 5) int
J_TYPE, J_PA, J_PB, J_QS, J_QN = range(5)
# joints: jv (n_j, 6, 3)
J_RA, J_RB, J_AXA, J_N1A, J_N2A, J_N1B = range(6)
# constraint rows: ri (n_r, 3) int; rv (n_r, 2, 3) holds (u, w)
R_KIND, R_JOINT, R_DRV = range(3)
# element parameters: ap (n_a, 3), tp (n_t, 3)
K_STIFF, K_FREE, K_DAMP = range(3)
# constant loads: lv (n_l, 3, 3)
L_POINT, L_FORCE, L_TORQUE = range(3)
# torque drivers: di (n_d, 4) int
D_JOINT, D_Q, D_DRIVER, D_ROT = range(4)
# dampers: ei (n_e, 2) int, kinds
E_KIND, E_INDEX = range(2)
AXIAL, TORSIONAL = range(2)
# joint geometry JW (n_j, 8, 3), see kinematics.joint_geometry
G_OA, G_SA, G_OB, G_SB, G_A1, G_A2, G_B1, G_AX = range(8)
N_GEOMETRY = 8
