"""The CI replay job's summary as Markdown (templates/ci/summary.md.j2): the verdict
sentence of each farm result and the fidelity of the capsule's plan. runner.ci.step_summary
gathers them; this module only writes them."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..build.plan import Fidelity
from ..textsafe import md_code, md_text
from .templates import add_filters, render
from .text import NAME_ONLY

ROWS = 50  # fidelity rows in the table; `replay --all` lists every one


def cell(text: Any) -> str:
    """A table cell: the value as inline code (textsafe's Markdown rule), "-" when there is none."""
    return md_code(text, table=True) if text not in (None, "") else "-"


def sentence(result: Mapping[str, Any]) -> str:
    """One farm result (`replay farm run --json`'s) as a sentence: the verdict first."""
    verdict = str(result.get("verdict", "inconclusive"))
    reason = str(result.get("reason") or "").strip().rstrip(".")
    said = f"**{md_text(verdict.upper())}**"
    said += f": {md_code(reason)}." if reason else "."  # a broken capsule's reason quotes its remote
    if result.get("signature"):
        said += f" Signature {cell(result['signature'])}"
        if result.get("recorded_signature"):
            said += f" (recorded {cell(result['recorded_signature'])})"
        said += "."
    return said


def summary_markdown(capsule: str, results: Sequence[Mapping[str, Any]], error: str,
                     fidelity: Sequence[Fidelity]) -> str:
    name_only = [f.fact.removeprefix("env ") for f in fidelity if f.recorded == NAME_ONLY and f.fact.startswith("env ")]
    return render("ci/summary.md.j2", capsule=capsule, results=results, error=error,
                  exact=sum(1 for f in fidelity if f.status == "exact"), total=len(fidelity), name_only=name_only,
                  others=[f for f in fidelity if f.status != "exact" and f.recorded != NAME_ONLY], rows=ROWS)


add_filters(cell=cell, sentence=sentence)
