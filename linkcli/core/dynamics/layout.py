"""Column and row indices of the packed kernel arrays; the arrays, their units and which constants
index their columns are declared in :mod:`.records` (tests/test_dynamics_records.py checks both agree)."""

# joints: joint_index (n_j, 5) int
J_TYPE, J_PARENT_BODY, J_CHILD_BODY, J_Q_START, J_Q_COUNT = range(5)
# joints: joint_vectors (n_j, 6, 3)
J_PARENT_ORIGIN, J_CHILD_ORIGIN, J_PARENT_AXIS, J_PARENT_NORMAL1, J_PARENT_NORMAL2, J_CHILD_NORMAL1 = range(6)
# constraint rows: row_index (n_r, 3) int; row_vectors (n_r, 2, 3) holds (u, w)
R_KIND, R_JOINT, R_DRIVER = range(3)
# element parameters: axial_parameters (n_a, 3), torsional_parameters (n_t, 3)
K_STIFFNESS, K_FREE_POSITION, K_DAMPING = range(3)
# constant loads: load_vectors (n_l, 3, 3)
L_POINT, L_FORCE, L_TORQUE = range(3)
# torque drivers: torque_driver_index (n_d, 4) int
D_JOINT, D_VARIABLE, D_DRIVER, D_IS_ROTATION = range(4)
# dampers: damper_index (n_e, 2) int, kinds
E_KIND, E_ELEMENT = range(2)
AXIAL, TORSIONAL = range(2)
# joint geometry JW (n_j, 8, 3), see kinematics.joint_geometry
G_ORIGIN_A, G_ARM_A, G_ORIGIN_B, G_ARM_B, G_NORMAL1_A, G_NORMAL2_A, G_NORMAL1_B, G_AXIS_A = range(8)
N_GEOMETRY = 8
