// Package textio holds the small helpers the text renderers share
// (eval/report, inspect, the experiment runner's reports and step logs,
// the tool's messages): ErrWriter, which keeps the first write error so
// that a renderer can write line by line and report once, JoinAnd,
// Plural and Count for English lists and counts, and Wrap for long lines.
package textio
