package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress draws a one-line progress bar on stderr when it is a terminal.
type progress struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	tty   bool
}

func newProgress(label string) *progress {
	tty := false
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		tty = true
	}
	return &progress{w: os.Stderr, label: label, start: time.Now(), tty: tty}
}

func (p *progress) update(done, total int) {
	if logs.quiet || total <= 0 {
		return
	}
	now := time.Now()
	if logs.json {
		// An event per second at most, and at the end.
		if done < total && now.Sub(p.last) < time.Second {
			return
		}
		p.last = now
		logs.emit("info", "progress", []any{"stage", p.label, "done", done, "total", total,
			"rate_per_s", float64(done) / now.Sub(p.start).Seconds()})
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
	rate := float64(done) / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%-14s [%s] %d/%d  %.0f/s ", p.label, bar, done, total, rate)
	if done >= total {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
