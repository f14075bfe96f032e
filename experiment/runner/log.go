package runner

import (
	"cmp"
	"fmt"
	"os"

	"github.com/unlearn-tool/unlearn/internal/eventlog"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
)

// stepLog streams a step's log events into its folder as JSON lines, in
// the format of the command line's --log-format json ({"time", "level",
// "event", ...}, the same eventlog.Logger): the library's steps (localize,
// unlearn, train, epoch), progress at most once a second per stage, the
// result, or the error that ended the step. A long step can be watched
// (tail -f) and a failed one read afterwards.
type stepLog struct {
	f     *os.File
	w     *textio.ErrWriter
	log   *eventlog.Logger
	terms setting.Terms // the job's, for the errors logged
}

func (r *state) createLog(path string) (*stepLog, error) {
	// A log in the results folder is an output like any other: never
	// written through a link or into a device.
	logOut := outfile.Output{Setting: "config", Path: path, Note: "a step log in the experiment's out folder"}
	if err := outfile.Check([]outfile.Output{logOut}, nil); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &textio.ErrWriter{W: f}
	return &stepLog{f: f, w: w, log: &eventlog.Logger{W: w, JSON: true}, terms: r.terms()}, nil
}

// info logs a step of the library (unlearn.Job.Info, RetrainJob.Info).
func (l *stepLog) info(event, text string, fields ...any) { l.log.Info(event, text, fields...) }

// result logs the step's outcome.
func (l *stepLog) result(fields ...any) { l.log.Result("result", fields...) }

// fail logs the error that ended the step and returns it with the step
// named.
func (l *stepLog) fail(what string, err error) error {
	l.log.Emit("error", "error", "msg", setting.Render(setting.InFile(err), cmp.Or(l.terms, setting.Plain)))
	return setting.InFile(fmt.Errorf("%s: %w", what, err))
}

// bar returns a progress callback for a labelled stage that logs at most
// one event a second, and the last.
func (l *stepLog) bar(label string) func(done, total int) { return l.log.Bar(label) }

func (l *stepLog) close() error {
	err := l.f.Close()
	if l.w.Err != nil {
		return l.w.Err
	}
	return err
}
