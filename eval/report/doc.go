// Package report presents eval's results: the rows of the metrics table
// that the terminal and the HTML page share, the terminal renderers, and a
// self-contained HTML report with plots (gonum.org/v1/plot, embedded as PNG
// data URIs) that opens offline. It computes nothing itself: every number
// comes from a schema.Report (metrics.json) or a schema.CompareReport, and
// the HTML page's feature plots from the eval.Measurements behind it.
//
//	Rows(rep)                 the table's rows
//	WriteTable(w, rep)        the terminal metrics table (`unlearn eval`, the main command)
//	WriteCompare(w, rep)      the terminal table of `unlearn compare`, one row per model
//	ProxiesLine(p)            the oracle-free proxies of a run in one line
//	HTML(rep, ms), JSON(v), Files the HTML page, metrics.json, both rendered before writing
//
// Renderers write only to the io.Writer they are given and return its
// first error; percentages have two decimals, Δ is in points with a sign.
package report
