// Package clilog is the command line's output plumbing, apart from the
// commands themselves: a logger that writes status lines, progress,
// results and errors to stderr as text or as JSON lines (--log-format
// json: one object per line, {"time", "level", "event", ...}), progress
// bars on a terminal (JSON progress events otherwise, at most one per
// second per stage), the reading of a --config YAML file into flag
// arguments, and the check of a command's output paths against its inputs
// (Outputs). It knows nothing about unlearning; cmd/unlearn owns one
// Logger and passes its Info and Bar to the library's callbacks.
package clilog
