// Package schema holds the types of the JSON files the tool writes for
// other programs to read: metrics.json (Report, schema
// unlearn.metrics/v1, MetricsSchema) and the JSON of `unlearn compare`
// (CompareReport, schema unlearn.compare/v1, CompareSchema), with every
// type that appears inside them: the per-model Metrics, the unlearning
// run's description (Unlearning, RunLog, Audit, MaskSummary), the
// oracle-free proxies (ProxyLog) and the auto schedule (AutoSchedule).
//
// The field order, JSON tags and doc comments here are the schema: a
// struct's fields are written in the order they are declared, and the doc
// comments are the fields' documentation (docs/FORMATS.md, "metrics.json",
// documents the same fields for users and must agree). The package is a
// leaf: it imports only the standard library, so that a program reading
// metrics.json needs nothing else of this module.
//
// Versioning: within a version (the schema strings above) fields may be
// added; none is removed, renamed or changes meaning. Anything else needs a
// new version string.
//
// Who fills what: eval measures models (Metrics, Delta, Agreement,
// Proxies, ProxyReference) and assembles Report and CompareReport; unlearn
// fills Unlearning, ProxyLog, AutoSchedule and Audit; localize summarizes a
// mask (MaskSummary, LayerChoice, CritMemStats); train reports EpochStats.
//
// Data the JSON leaves out stays with its producer. eval.Metrics embeds
// Metrics and adds the predictions, example ids and attack features that
// agreement and the HTML report's plots need: the features are eval's own
// types, and a leaf package cannot hold them. Two plain index lists that
// the run needs later are kept on the schema types, tagged json:"-",
// because they depend on nothing: ProxyLog.Holdout and
// ProxyReference.Test.
package schema
