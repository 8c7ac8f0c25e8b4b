"""Pydantic models of a job file (``linkcli batch JOBS.yaml``), 1:1 with the YAML.

A job file lists jobs by name; each job names mechanism files (paths or globs relative to the
job file), an analysis with its options, optional figures and acceptance checks, and optionally
a parameter study (variants of the mechanism document)::

    out_dir: ../../results            # relative to this file; --out-dir overrides it
    jobs:
      fourbar:
        files: ../fourbar.yaml
        analysis: solve               # solve | ik | jacobian | simulate | forces
        options: {sweep: {crank_pin: {from: 0, to: 360, step: 2}}}
        figures:
          - {range_of_motion: O4}
        checks:
          - {column: "B.transmission [deg]", min: 40}
          - {max_loop_residual: 1.0e-9}

Like mechanism files, job files are read with :func:`linkcli.io.yaml_source.read_yaml_file` and
validated by :func:`linkcli.io.loader.validate_document` (``model_cls=JobFile``), so every
problem is a ``file:line:col`` diagnostic. What needs the mechanism files (do the parameter
paths exist? do the columns exist?) is checked when the jobs run and reported per job.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from .base import Pos, Strict, choices_hint, located_error
from .mechanism import Bool, ForcesDefaults, FrameRef, Name, NonNeg, Num, SimulateDefaults, SolveDefaults, Vec
from .study import Study, Text

ANALYSES = ("solve", "ik", "jacobian", "simulate", "forces")
AnalysisName = Literal["solve", "ik", "jacobian", "simulate", "forces"]

# -- figures and checks ----------------------------------------------------------------------------
Stat = Literal["min", "max", "mean", "std", "range", "absmax", "first", "last", "rms"]
FIGURE_KINDS = ("column", "path_deviation", "range_of_motion", "peak_driver_load", "grashof")
CHECK_SHORTCUTS = ("min_transmission_angle", "max_loop_residual", "max_driver_torque")


def _exactly_one(model: Strict, keys: tuple, what: str) -> list[str]:
    given = [k for k in keys if getattr(model, k) not in (None, False)]
    if len(given) > 1:
        raise located_error(f"{what} takes one of {', '.join(keys)}; got {', '.join(given)}", sub=(given[1],),
                            hint="Split it into two entries.")
    if not given:
        raise located_error(f"{what} needs one of {', '.join(keys)}",
                            hint=f"For example `{{{keys[0]}: ...}}`.")
    return given


class Figure(Strict):
    """A number (or label) computed from a job's result table, reported per job or per variant.

    One of: ``column`` with ``stat`` (min, max, mean, std, range, absmax, first, last, rms over the
    column's finite values; a ``*`` in the column name matches any text); ``path_deviation: FRAME``
    (studies: largest distance between the frame's path in a variant and in the nominal
    mechanism at the same inputs, file length unit); ``range_of_motion: VARIABLE`` (largest minus
    smallest value of a joint variable, its unit: on a solve sweep of one input the exact range
    over the swept inputs -- the solved rows, the configurations at located limits of motion and
    the stationary points between rows, located by root-finding on the variable's rate; on other
    tables (grids, several inputs, simulate) max - min of the rows, and the figure's note says
    "sampled"); ``peak_driver_load: DRIVER`` (simulate: largest |torque or force| of a
    driver); ``grashof: true`` (Grashof class of each four-bar loop)."""

    name: Text | None = None
    column: Text | None = None
    stat: Stat = "max"
    path_deviation: FrameRef | None = None
    range_of_motion: Text | None = None
    peak_driver_load: Name | None = None
    grashof: Bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> Figure:
        _exactly_one(self, FIGURE_KINDS, "a figure")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in FIGURE_KINDS if getattr(self, k) not in (None, False))


class Check(Strict):
    """An acceptance check, pass or fail: ``{column: C, min: a, max: b}`` (every finite value of
    the column within the bounds; ``abs: true`` compares |values|; ``*`` in C matches any
    text), ``{figure: NAME, min/max}`` (a figure of this job), or a shortcut:
    ``min_transmission_angle: DEG`` (every four-bar transmission angle, in degrees whatever the
    file's units), ``max_loop_residual: R`` (m whatever the file's units; solve: loop
    residuals; simulate: the constraint residual), ``max_driver_torque: T`` (simulate: |torque|
    of every driver, N m, or N for a prismatic one)."""

    name: Text | None = None
    column: Text | None = None
    figure: Text | None = None
    min: Num | None = None
    max: Num | None = None
    abs: Bool = False
    min_transmission_angle: Num | None = None
    max_loop_residual: NonNeg | None = None
    max_driver_torque: NonNeg | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> Check:
        (subject,) = _exactly_one(self, ("column", "figure") + CHECK_SHORTCUTS, "a check")
        if subject in ("column", "figure"):
            if self.min is None and self.max is None:
                raise located_error(f"a {subject} check needs `min:` or `max:` (or both)", sub=(subject,),
                                    hint=f"For example `{{{subject}: ..., min: 40}}`.")
            if self.min is not None and self.max is not None and self.min > self.max:
                raise located_error(f"min ({self.min:g}) is larger than max ({self.max:g})", sub=("min",))
        else:
            extra = [k for k in ("min", "max") if getattr(self, k) is not None] + (["abs"] if self.abs else [])
            if extra:
                raise located_error(f"`{extra[0]}` does not apply to {subject}", sub=(extra[0],),
                                    hint=f"The value of {subject} is the limit.")
        return self

    @property
    def subject(self) -> str:
        return next(k for k in ("column", "figure") + CHECK_SHORTCUTS if getattr(self, k) is not None)

    def label(self) -> str:
        """Default name: ``B.transmission >= 40``, ``max_loop_residual <= 1e-09``."""
        if self.name:
            return self.name
        subject = self.subject
        if subject in ("column", "figure"):
            what = re.sub(r"\s*\[[^\]]*\]$", "", getattr(self, subject))
            what = f"|{what}|" if self.abs else what
            if self.min is not None and self.max is not None:
                return f"{self.min:g} <= {what} <= {self.max:g}"
            return f"{what} >= {self.min:g}" if self.min is not None else f"{what} <= {self.max:g}"
        op = ">=" if subject.startswith("min") else "<="
        return f"{subject} {op} {getattr(self, subject):g}"


# -- jobs ---------------------------------------------------------------------------------------------
class IKOptions(Strict):
    """Targets in the file's units (planar x, y[, angle]; spatial x, y, z[, roll, pitch, yaw])."""

    targets: Annotated[list[Vec], Field(min_length=1)]
    mode: Literal["full", "position", "xy"] | None = None
    guess: dict[str, Num] = Field(default_factory=dict)


class JacobianOptions(Strict):
    set: dict[str, Num] = Field(default_factory=dict)
    frame: Literal["base", "effector"] = "base"


class JobBase(Strict):
    #: mechanism files: a path or glob, or a list of them, relative to the job file
    files: Annotated[list[Text], Field(min_length=1)]
    description: str = ""
    figures: list[Figure] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    #: result table file name in the output folder (.csv or .json); default ``<job id>.csv``
    output: Text | None = None
    study: Study | None = None
    #: warnings of the mechanism files (implausible gravity, a spring too stiff for dt ...) are
    #: errors: the job reports the file invalid (like ``linkcli validate --strict``)
    strict: Bool = False
    #: time limit in seconds of the job on one file (a study: of each variant); past it the
    #: job (variant) fails with status error and the others go on. Default: --timeout, else none
    timeout: Pos | None = None

    @field_validator("files", mode="before")
    @classmethod
    def _one_file(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise located_error(f"expected a file path or a list of them, got {value!r}",
                                hint="Write e.g. `files: ../fourbar.yaml` or `files: [../*.yaml]`.")
        return value

    @model_validator(mode="after")
    def _references(self) -> JobBase:
        names = [f.name for f in self.figures if f.name]
        for i, f in enumerate(self.figures):
            if f.path_deviation is not None and self.study is None:
                raise located_error("path_deviation compares variants with the nominal mechanism: it needs a "
                                    "`study`", sub=("figures", i, "path_deviation"),
                                    hint="Add a study block, or use a column figure.")
        for i, c in enumerate(self.checks):
            if c.figure is not None and c.figure not in names:
                raise located_error(f"unknown figure '{c.figure}'", sub=("checks", i, "figure"),
                                    hint=choices_hint("figures (their `name:`)", c.figure, names))
        return self


class SolveJob(JobBase):
    analysis: Literal["solve"] = "solve"
    #: merged over the file's ``analysis.solve`` (a `set` or `sweep` here replaces the file's sweep)
    options: SolveDefaults = Field(default_factory=SolveDefaults)


class IKJob(JobBase):
    analysis: Literal["ik"]
    options: IKOptions


class JacobianJob(JobBase):
    analysis: Literal["jacobian"]
    options: JacobianOptions = Field(default_factory=JacobianOptions)


class SimulateJob(JobBase):
    analysis: Literal["simulate"]
    #: merged over the file's ``analysis.simulate``
    options: SimulateDefaults = Field(default_factory=SimulateDefaults)


# --- forces analysis (issue 12): merged over the file's analysis.forces ---------------------------
class ForcesJob(JobBase):
    analysis: Literal["forces"]
    #: merged over the file's ``analysis.forces`` (a `set` or `sweep` here replaces the file's sweep)
    options: ForcesDefaults = Field(default_factory=ForcesDefaults)
# --- end forces ----------------------------------------------------------------------------------------


class _UnknownAnalysis(Strict):
    """Stands in for a job whose ``analysis`` is unknown, so that the error names that key."""

    model_config = ConfigDict(extra="allow", frozen=True)
    analysis: AnalysisName


def _analysis_of(data: Any) -> str:
    if not isinstance(data, dict):
        return "solve"
    value = data.get("analysis", "solve")
    return value if isinstance(value, str) and value in ANALYSES else "unknown"


Job = Annotated[Annotated[SolveJob, Tag("solve")] | Annotated[IKJob, Tag("ik")]
                | Annotated[JacobianJob, Tag("jacobian")] | Annotated[SimulateJob, Tag("simulate")]
                | Annotated[ForcesJob, Tag("forces")] | Annotated[_UnknownAnalysis, Tag("unknown")],
                Discriminator(_analysis_of)]


class JobFile(Strict):
    """A job file. See README.md ("Batch runs and parameter studies") for a commented example."""

    description: str = ""
    #: output folder, relative to the job file (``--out-dir`` overrides it)
    out_dir: Text | None = None
    jobs: Annotated[dict[Name, Job], Field(min_length=1)]
    schema_: str | None = Field(default=None, alias="$schema")


__all__ = ["JobFile", "SolveJob", "IKJob", "JacobianJob", "SimulateJob", "ForcesJob", "JobBase", "Figure", "Check",
           "IKOptions",
           "JacobianOptions", "ANALYSES", "CHECK_SHORTCUTS", "FIGURE_KINDS"]
