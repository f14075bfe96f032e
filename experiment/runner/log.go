package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// stepLog streams a step's log events into its folder as JSON lines, in
// the format of the command line's --log-format json ({"time", "level",
// "event", ...}): the library's steps (localize, unlearn, train, epoch),
// progress at most once a second per stage, the result, or the error that
// ended the step. A long step can be watched (tail -f) and a failed one
// read afterwards.
type stepLog struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

func createLog(path string) (*stepLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &stepLog{f: f}, nil
}

func (l *stepLog) emit(level, event string, fields []any) {
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "level": level, "event": event}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fmt.Sprint(fields[i])] = fields[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"level": level, "event": event, "msg": fmt.Sprint(fields...)})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(b, '\n')); err != nil && l.err == nil {
		l.err = err
	}
}

// info logs a step of the library (unlearn.Job.Info, RetrainJob.Info).
func (l *stepLog) info(event, text string, fields ...any) {
	l.emit("info", event, append([]any{"msg", text}, fields...))
}

// result logs the step's outcome.
func (l *stepLog) result(fields ...any) { l.emit("info", "result", fields) }

// fail logs the error that ended the step and returns it with the step
// named.
func (l *stepLog) fail(what string, err error) error {
	l.emit("error", "error", []any{"msg", err.Error()})
	return fmt.Errorf("%s: %w", what, err)
}

// bar returns a progress callback for a labelled stage that logs at most
// one event a second, and the last.
func (l *stepLog) bar(label string) func(done, total int) {
	start, last := time.Now(), time.Time{}
	return func(done, total int) {
		if total <= 0 {
			return
		}
		now := time.Now()
		if done < total && now.Sub(last) < time.Second {
			return
		}
		last = now
		l.emit("info", "progress", []any{"stage", label, "done", done, "total", total,
			"rate_per_s", float64(done) / now.Sub(start).Seconds()})
	}
}

func (l *stepLog) close() error {
	err := l.f.Close()
	if l.err != nil {
		return l.err
	}
	return err
}
