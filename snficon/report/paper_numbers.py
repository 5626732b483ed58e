"""The numbers the paper's text quotes (§VII), set beside the campaign's own.

§VII-A quotes, per base case, SNF-ICON's percent change of mean waiting time
against FCFS/B+IPM and SNF+IPM, and some of its wasted-energy changes;
§VII-C, D and G quote mode shares, variant comparisons and absolute energies.
:data:`SECTION_7A` and :data:`QUOTED` hold them as printed (the sentence's
numbers, signed: negative = SNF-ICON lower), and :func:`section_7a_table` and
:func:`quoted_table` compute the same quantities from campaign results.

Cases are found by the campaign labels of ``expe/paper.toml`` (platform
``aoba-64``, workload ``das2-fs1``...) over whole workloads (a run limited
to its first jobs is not the paper's case). The paper's numbers come from
its authors' simulator, which draws every switch-on/off duration from
Normal(mean, 10 % of mean), where Batsim's are exact; a second campaign
(e.g. jittered transitions) can be given as an extra column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from snficon.report.data import J_PER_MWH, S_PER_MIN, base_rows
from snficon.report.style import policy_label

#: The paper's case names -> (platform label, workload label) of ``expe/paper.toml``.
PAPER_CASES = {
    "DAS2 FS1": ("aoba-64", "das2-fs1"),
    "DAS2 FS2": ("aoba-64", "das2-fs2"),
    "DAS2 FS3": ("aoba-64", "das2-fs3"),
    "DAS2 FS4": ("aoba-64", "das2-fs4"),
    "Markovian 3000": ("aoba-64", "markovian-3000"),
    "SDSC Blue": ("aoba-1152", "sdsc-blue"),
    "Taurus SDSC Blue": ("taurus-1152", "sdsc-blue"),
}

#: Metric column -> (what the tables call it, unit divisor, unit).
QUANTITIES = {"mean_wait": ("mean wait", S_PER_MIN, "min"),
              "energy_wasted": ("wasted energy", J_PER_MWH, "MWh"),
              "icon_time_share": ("time in ICON", 0.01, "%")}


@dataclass(frozen=True)
class PaperNumber:
    """One number of the paper's text.

    With ``versus``: the percent change of ``metric`` of ``policy`` against
    ``versus``, 100 (policy - versus) / versus, or with ``ratio`` the factor
    policy / versus ("4.9 times"); without: ``metric`` of
    ``policy`` in the unit of :data:`QUANTITIES` (``policy`` ``"*"``: the
    range over the case's policies). ``value`` is None where the paper gives
    words only; ``high`` ends a range (``value``-``high``).
    """

    section: str
    case: str
    metric: str
    policy: str
    versus: str | None
    value: float | None
    words: str = ""
    high: float | None = None
    ratio: bool = False


def _7a(case: str, wait_fcfs: float, wait_snf: float, waste_fcfs: float | None,
        waste_snf: float | None) -> list[PaperNumber]:
    within = "within about 1% of at least one heuristic baseline"
    return [PaperNumber("VII-A", case, "mean_wait", "snficon", "fcfsbIpm", wait_fcfs),
            PaperNumber("VII-A", case, "mean_wait", "snficon", "snfIpm", wait_snf),
            PaperNumber("VII-A", case, "energy_wasted", "snficon", "fcfsbIpm", waste_fcfs,
                        "" if waste_fcfs is not None else within),
            PaperNumber("VII-A", case, "energy_wasted", "snficon", "snfIpm", waste_snf,
                        "" if waste_snf is not None else within)]


#: §VII-A: "Relative to FCFS/B+IPM, SNF-ICON reduces mean waiting time ... by 2.2% on DAS2
#: FS1, 44.8% on DAS2 FS2, 2.4% on DAS2 FS3, 11.6% on DAS2 FS4, 42.4% on the generated
#: Markovian workload, and 16.4% on SDSC Blue. Relative to SNF+IPM ... improvements of
#: approximately 0.2%, 0.1%, 11.3%, 2.9%, and 26.9% in the first five cases, followed by a
#: 0.15% increase in waiting time on SDSC Blue." Wasted energy: "within about 1% of at
#: least one heuristic baseline in five cases. The exception is the generated Markovian
#: workload, where its 5.94 MWh energy waste is approximately 6.2% above SNF+IPM and 6.9%
#: above FCFS/B+IPM"; on SDSC Blue (§VII-D) "SNF+IPM slightly dominates ..., reducing mean
#: waiting time by approximately 0.15% and wasted energy by 0.41%".
SECTION_7A = (
    *_7a("DAS2 FS1", -2.2, -0.2, None, None),
    *_7a("DAS2 FS2", -44.8, -0.1, None, None),
    *_7a("DAS2 FS3", -2.4, -11.3, None, None),
    *_7a("DAS2 FS4", -11.6, -2.9, None, None),
    *_7a("Markovian 3000", -42.4, -26.9, 6.9, 6.2),
    *_7a("SDSC Blue", -16.4, 0.15, None, 0.41),
)

def _rl_numbers() -> list[PaperNumber]:
    """§VII-A on RL Budiarjo against SNF-ICON: "On DAS2 FS1, FS3, and FS4, RL reduces mean
    waiting time by approximately 32%, 67%, and 76%, respectively, but consumes approximately
    4.9, 5.8, and 4.8 times the corresponding SNF-ICON energy. Conversely, on DAS2 FS2 and
    Markovian 3000, RL reduces energy consumption by approximately 14% and 17%,
    respectively, but incurs approximately 1.9 and 6.5 times the corresponding SNF-ICON mean
    waiting time." The energy is the wasted energy of Fig. 3."""
    faster = "RL reduces mean waiting time by approximately 32%, 67%, and 76%"
    costlier = "consumes approximately 4.9, 5.8, and 4.8 times the corresponding SNF-ICON energy"
    saving = "RL reduces energy consumption by approximately 14% and 17%"
    slower = "incurs approximately 1.9 and 6.5 times the corresponding SNF-ICON mean waiting time"
    numbers = []
    for case, wait, energy in (("DAS2 FS1", -32, 4.9), ("DAS2 FS3", -67, 5.8),
                               ("DAS2 FS4", -76, 4.8)):
        numbers += [PaperNumber("VII-A", case, "mean_wait", "rlBudiarjo", "snficon", wait, faster),
                    PaperNumber("VII-A", case, "energy_wasted", "rlBudiarjo", "snficon", energy,
                                costlier, ratio=True)]
    for case, energy, wait in (("DAS2 FS2", -14, 1.9), ("Markovian 3000", -17, 6.5)):
        numbers += [PaperNumber("VII-A", case, "energy_wasted", "rlBudiarjo", "snficon", energy,
                                saving),
                    PaperNumber("VII-A", case, "mean_wait", "rlBudiarjo", "snficon", wait, slower,
                                ratio=True)]
    return numbers


#: Other numbers of §VII's text, each with its sentence's words.
QUOTED = (
    PaperNumber("VII-A", "DAS2 FS3", "energy_wasted", "snficon", None, 9.88,
                "SNF-ICON consumes approximately 9.88 MWh on DAS2 FS3"),
    PaperNumber("VII-A", "DAS2 FS4", "energy_wasted", "snficon", None, 15.6,
                "and 15.6 MWh on DAS2 FS4"),
    PaperNumber("VII-A", "Markovian 3000", "energy_wasted", "snficon", None, 5.94,
                "its 5.94 MWh energy waste"),
    PaperNumber("VII-C", "Markovian 3000", "icon_time_share", "snficon", None, 70.9,
                "spends 70.9% of its simulated time in ICON mode"),
    *(PaperNumber("VII-C", case, "icon_time_share", "snficon", None, 0.7,
                  "In contrast, DAS2 FS1-FS4 spend only 0.7-2.1%", high=2.1)
      for case in ("DAS2 FS1", "DAS2 FS2", "DAS2 FS3", "DAS2 FS4")),
    PaperNumber("VII-D", "DAS2 FS4", "mean_wait", "snficon-nf", "snficon", -0.06,
                "the NF point dominates the complete point by approximately 0.06% in "
                "waiting time"),
    PaperNumber("VII-D", "DAS2 FS4", "energy_wasted", "snficon-nf", "snficon", -0.95,
                "and 0.95% in energy waste"),
    PaperNumber("VII-D", "SDSC Blue", "mean_wait", "snficon-nf", "snfIpm", -3.1,
                "reducing waiting time by approximately 3.1% relative to SNF+IPM"),
    PaperNumber("VII-D", "SDSC Blue", "energy_wasted", "snficon-nf", "snfIpm", 8.6,
                "while increasing wasted energy by approximately 8.6%"),
    *_rl_numbers(),
    PaperNumber("VII-G", "Taurus SDSC Blue", "energy_wasted", "*", None, 5.22,
                "SDSC Blue results use approximately 5.22 MWh on Taurus"),
    PaperNumber("VII-G", "SDSC Blue", "energy_wasted", "*", None, 36.3,
                "compared with approximately 36.3-39.9 MWh on AOBA", high=39.9),
)


def _case_rows(frame: pd.DataFrame, case: str) -> pd.DataFrame:
    """The base runs of the paper's ``case`` over the whole workload."""
    platform, workload = PAPER_CASES[case]
    base = base_rows(frame)
    whole = base["workload_jobs"].isna() | (base["workload_jobs"].astype(str).isin(["", "nan"])) \
        if "workload_jobs" in base else pd.Series(True, index=base.index)
    return base[(base["platform"] == platform) & (base["workload"] == workload) & whole]


def _values(rows: pd.DataFrame, policy: str, metric: str) -> np.ndarray:
    """``metric`` of every base run of ``policy`` (several for RL Budiarjo: one per model)."""
    picked = rows.loc[rows["policy"] == policy, metric] if metric in rows else pd.Series([])
    return pd.to_numeric(picked, errors="coerce").dropna().to_numpy(dtype=float)


def _value(rows: pd.DataFrame, policy: str, metric: str) -> float:
    values = _values(rows, policy, metric)
    return float(values[0]) if len(values) else float("nan")


def reproduce(number: PaperNumber, frame: pd.DataFrame) -> tuple[float, float]:
    """The campaign's value of ``number``: (low, high), equal unless a range; NaN if missing."""
    rows = _case_rows(frame, number.case)
    if number.versus is not None:
        mine = _values(rows, number.policy, number.metric)
        theirs = _value(rows, number.versus, number.metric)
        if not len(mine) or not theirs or np.isnan(theirs):
            return float("nan"), float("nan")
        change = mine / theirs if number.ratio else 100 * (mine - theirs) / theirs
        return float(change.min()), float(change.max())
    scale = QUANTITIES[number.metric][1]
    if number.policy == "*":
        values = pd.to_numeric(rows.get(number.metric), errors="coerce").dropna() / scale
        return ((float(values.min()), float(values.max())) if len(values)
                else (float("nan"), float("nan")))
    value = _value(rows, number.policy, number.metric) / scale
    return value, value


def _present(frame: pd.DataFrame, numbers: tuple[PaperNumber, ...]) -> list[PaperNumber]:
    return [n for n in numbers if not np.isnan(reproduce(n, frame)[0])]


def section_7a_table(frame: pd.DataFrame, others: dict[str, pd.DataFrame] | None = None
                     ) -> pd.DataFrame:
    """§VII-A's percent changes: the paper's, this campaign's and each of ``others``'.

    One row per number of :data:`SECTION_7A` whose case the campaign ran;
    ``difference (pp)`` is this campaign's minus the paper's, in percentage
    points. Empty when none of the paper's cases is in the results.
    """
    records = []
    for number in _present(frame, SECTION_7A):
        mine = reproduce(number, frame)[0]
        record = {"case": number.case, "quantity": QUANTITIES[number.metric][0],
                  "SNF-ICON vs": policy_label(number.versus or ""),
                  "paper (%)": number.value if number.value is not None else np.nan,
                  "this campaign (%)": mine}
        for name, other in (others or {}).items():
            record[f"{name} (%)"] = reproduce(number, other)[0]
        record["difference (pp)"] = (mine - number.value if number.value is not None
                                     else np.nan)
        record["paper's words"] = number.words
        records.append(record)
    return pd.DataFrame(records)


def _text(low: float, high: float, digits: int = 2) -> str:
    if np.isnan(low):
        return ""
    if abs(high - low) > 0:
        return f"{low:.{digits}f}-{high:.{digits}f}"
    return f"{low:.{digits}f}"


def quoted_table(frame: pd.DataFrame, others: dict[str, pd.DataFrame] | None = None
                 ) -> pd.DataFrame:
    """The other numbers of §VII (:data:`QUOTED`) beside this campaign's (and ``others``')."""
    records = []
    for number in _present(frame, QUOTED):
        label, _, unit = QUANTITIES[number.metric]
        unit = ("x" if number.ratio else "%") if number.versus else unit
        who = "each policy" if number.policy == "*" else policy_label(number.policy)
        what = f"{label} of {who}" + (f" vs {policy_label(number.versus)}" if number.versus
                                      else "")
        record = {"section": number.section, "case": number.case, "quantity": what,
                  "unit": unit,
                  "paper": _text(number.value, number.high if number.high is not None
                                 else number.value),
                  "this campaign": _text(*reproduce(number, frame))}
        for name, other in (others or {}).items():
            record[name] = _text(*reproduce(number, other))
        record["paper's words"] = number.words
        records.append(record)
    return pd.DataFrame(records)
