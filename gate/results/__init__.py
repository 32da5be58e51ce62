"""results.json: the versioned file every reporter renders from (docs/reports.md). This
package is the format and nothing else: its schema (:mod:`~gate.results.schema`), how it
is written (:mod:`~gate.results.write`) and read, older layouts migrated
(:mod:`~gate.results.read`). What a run computes is written as :mod:`gate.model` declares
it; what policy adds and reads back lives in :mod:`gate.pipeline.typed`, merging shards in
:mod:`gate.policy.merge`.

Compatibility: ``schema_version`` changes only when a field is removed or changes meaning;
new optional fields keep the version.
"""

from gate import model as _m
from gate.results.read import (
    SampleView,
    hard_failure_of,
    open_results,
    read_results,
    tallies_of,
)
from gate.results.schema import (
    SCHEMA_VERSION,
    STOCK_REASONS,
    CaseResult,
    HardFailureResult,
    HistoryInfo,
    HistoryRun,
    PolicyInfo,
    PolicyParams,
    Results,
    SampleResult,
    SpendInfo,
    SuiteTestResult,
    failed_by_agent,
    json_schema,
    sampled,
)
from gate.results.write import (
    Decisions,
    ListRecords,
    PolicyFields,
    RecordTemplate,
    SampleRecords,
    assemble,
    decided,
    dumps_results,
    evidence_json,
    result_record,
    results_bytes,
    tallies_json,
    to_jsonable,
    validity_fields,
    with_comparison,
    write_results,
    write_scored,
)

# The names the reporters knew the model's types by in results.json (the same classes).
Comparison = _m.Comparison
CostDeltaResult = _m.CostDelta
DatasetInfo = _m.DatasetRef
Flip = _m.Flip
GateResult = _m.GateOutcome
MetricDelta = _m.MetricDelta
MetricStat = _m.MetricStats
ShardInfo = _m.Shard
ToolDrift = _m.ToolDrift
ToolInfo = _m.ToolRef
ToolRollup = _m.ToolRecall
VarianceResult = _m.VarianceOutcome
Verdict = _m.Verdict

__all__ = [
    "SCHEMA_VERSION",
    "STOCK_REASONS",
    "CaseResult",
    "Comparison",
    "CostDeltaResult",
    "DatasetInfo",
    "Decisions",
    "Flip",
    "GateResult",
    "HardFailureResult",
    "HistoryInfo",
    "HistoryRun",
    "ListRecords",
    "MetricDelta",
    "MetricStat",
    "PolicyFields",
    "PolicyInfo",
    "PolicyParams",
    "RecordTemplate",
    "Results",
    "SampleRecords",
    "SampleResult",
    "SampleView",
    "ShardInfo",
    "SpendInfo",
    "SuiteTestResult",
    "ToolDrift",
    "ToolInfo",
    "ToolRollup",
    "VarianceResult",
    "Verdict",
    "assemble",
    "decided",
    "dumps_results",
    "evidence_json",
    "failed_by_agent",
    "hard_failure_of",
    "json_schema",
    "open_results",
    "read_results",
    "result_record",
    "results_bytes",
    "sampled",
    "tallies_json",
    "tallies_of",
    "to_jsonable",
    "validity_fields",
    "with_comparison",
    "write_results",
    "write_scored",
]
