// Package eventlog writes a run's status lines, progress, results and
// errors to stderr as text or as JSON lines (one object per line,
// {"time", "level", "event", ...}): progress bars on a terminal, JSON
// progress events otherwise (at most one per second per stage). It knows
// nothing about unlearning or flags; cmd/unlearn owns one Logger and passes
// its Info and Bar to the library's callbacks, and the experiment runner
// writes each step's log with one.
package eventlog
