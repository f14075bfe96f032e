// Package report presents eval's results: the rows of the metrics table
// that the terminal and the HTML page share, and a self-contained HTML
// report with plots (gonum.org/v1/plot, embedded as PNG data URIs) that
// opens offline. It computes nothing itself: every number comes from an
// eval.Report (metrics.json). Rows(rep) gives the table, HTML(rep) the page.
package report
