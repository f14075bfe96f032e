package eventlog

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Logger writes status, progress, results and errors to W, as text or as
// JSON lines. Its methods are safe for concurrent use.
type Logger struct {
	mu    sync.Mutex
	W     io.Writer
	JSON  bool
	Quiet bool
	// Prefix starts every text error line ("unlearn: error: ").
	Prefix string
	// drawn says a progress bar is on the terminal's last line: a text
	// line written after it first clears it (clearBar).
	drawn bool
}

// clearBar clears a progress bar drawn on the last line, so that the next
// line is not written over it; l.mu is held.
func (l *Logger) clearBar() {
	if l.drawn {
		fmt.Fprint(l.W, "\r\033[K")
		l.drawn = false
	}
}

// Reset points the logger at w in text mode, not quiet.
func (l *Logger) Reset(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.W, l.JSON, l.Quiet = w, false, false
}

// Emit writes one JSON event with fields (pairs of key, value).
func (l *Logger) Emit(level, event string, fields ...any) {
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
	l.W.Write(append(b, '\n'))
}

// Info reports a step: text as a line, or an event with fields (pairs of
// key, value) and the text as "msg" (a "note" or "warning" event's without
// its "note: " or "warning: " label; a "msg" among fields wins). Quiet
// silences it.
func (l *Logger) Info(event, text string, fields ...any) {
	if l.Quiet {
		return
	}
	if l.JSON {
		if event == "note" || event == "warning" {
			text = strings.TrimPrefix(text, event+": ")
		}
		l.Emit("info", event, append([]any{"msg", text}, fields...)...)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearBar()
	fmt.Fprintln(l.W, text)
}

// Result reports a command's outcome as a JSON event (text output has its
// tables on stdout instead). Quiet does not silence it.
func (l *Logger) Result(event string, fields ...any) {
	if l.JSON {
		l.Emit("info", event, fields...)
	}
}

// Fail reports the error that ends the run with its exit code. A message
// that starts with the program's name (the first word of Prefix), as the
// errors of the library package of that name do ("unlearn: invalid input:
// ..."), loses it, in both modes: the text line would read
// "unlearn: error: unlearn: invalid input: ...".
func (l *Logger) Fail(msg string, code int) {
	if name, _, ok := strings.Cut(l.Prefix, ": "); ok && name != "" {
		msg = strings.TrimPrefix(msg, name+": ")
	}
	if l.JSON {
		l.Emit("error", "error", "msg", msg, "exit_code", code)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearBar()
	fmt.Fprintf(l.W, "%s%s\n", l.Prefix, msg)
}

// Bar returns a progress callback for a labelled stage: a bar redrawn on a
// terminal stderr, a JSON progress event (at most one a second, and the
// last) in JSON mode, nothing otherwise or when Quiet. done == total ends
// the stage: the bar is cleared (a stage that ends early, as the auto
// schedule's training does, ends with done as its total), and so is a bar
// that a line of text follows.
func (l *Logger) Bar(label string) func(done, total int) {
	p := &progress{l: l, label: label, start: time.Now(), tty: stderrTTY()}
	return p.update
}

// Stage reports the start of a stage (the range test, an epoch): a line
// where no bar is drawn (text mode with stderr not a terminal, so that a
// redirected log is never silent for a whole stage), an event with fields
// and the text as "msg" in JSON mode, nothing on a terminal (the bar shows
// it) or when Quiet.
func (l *Logger) Stage(event, text string, fields ...any) {
	if l.Quiet || (!l.JSON && stderrTTY()) {
		return
	}
	l.Info(event, text, fields...)
}

// stderrTTY tells whether stderr is a terminal, where bars are drawn.
func stderrTTY() bool {
	st, err := os.Stderr.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type progress struct {
	l     *Logger
	label string
	start time.Time
	last  time.Time
	tty   bool
}

func (p *progress) update(done, total int) {
	l := p.l
	if l.Quiet || total <= 0 {
		return
	}
	now := time.Now()
	if l.JSON {
		if done < total && now.Sub(p.last) < time.Second {
			return
		}
		p.last = now
		l.Emit("info", "progress", "stage", p.label, "done", done, "total", total,
			"rate_per_s", float64(done)/now.Sub(p.start).Seconds())
		return
	}
	if !p.tty {
		return
	}
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	fill := width * done / total
	bar := make([]byte, width)
	for i := range bar {
		if i < fill {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	line := fmt.Sprintf("\r%-14s [%s] %d/%d", p.label, bar, done, total)
	line += pace(done, total, now.Sub(p.start))
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprint(l.W, line+" ")
	l.drawn = true
	if done >= total {
		l.clearBar()
	}
}

// pace is the rate and the time left of a stage that has done done of
// total in elapsed: nothing in its first second, where one step over a few
// microseconds would read as millions a second.
func pace(done, total int, elapsed time.Duration) string {
	if elapsed < time.Second || done <= 0 {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("  %.1f/s, about %s left", rate, left)
}
