package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/taskindex"
)

// maxThreadsPerCore bounds --threads: more intra-op threads than a few per
// core only add contention, and a huge count creates that many OS threads.
const maxThreadsPerCore = 4

// checkFlagValues refuses, before any work, a numeric flag of c that is
// not a finite number (NaN or ±Inf parse as floats, and NaN compares false
// with every bound, so it would slip past later checks or be taken for
// "unset"), a --threads beyond maxThreadsPerCore per core and a
// --batch-size beyond data.MaxBatchSize. Its errors are usage errors.
func checkFlagValues(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.Float64Flag:
			if v := c.Float64(name); math.IsNaN(v) || math.IsInf(v, 0) {
				return usagef("--%s %v: must be a finite number", name, v)
			}
		case *cli.IntFlag:
			v, cores := c.Int(name), runtime.NumCPU()
			switch {
			case name == "threads" && v > maxThreadsPerCore*cores:
				return usagef("--threads %d: at most %d on this machine (%d per core, %d cores)",
					v, maxThreadsPerCore*cores, maxThreadsPerCore, cores)
			case name == "batch-size" && v > data.MaxBatchSize:
				return usagef("--batch-size %d: at most %d", v, data.MaxBatchSize)
			}
		}
	}
	return nil
}

// shardOf is the shard a command with --shards and --shard runs
// (taskindex.Shard), checked before any work; score warns of an array task
// that runs its whole audit.
func shardOf(c *cli.Context, shards, shard int, gather bool) (int, error) {
	if w, _ := taskindex.Unsharded("audit", true); shards == 0 && w != nil && c.Command.Name == "score" {
		logs.Info("warning", "warning: "+render(w))
	}
	i, err := taskindex.Shard(shards, shard, c.IsSet("shard"), gather)
	return i, asUsage(err)
}

// errPanic marks a panic turned into an error by runRecovered.
var errPanic = errors.New("internal error")

// runRecovered runs the app and turns a panic of the command's goroutine
// into an error (with the stack on one line) after calling cleanup, so that
// the run still ends with one error line, or one JSON error event with
// --log-format json, and its temporary files removed.
func runRecovered(app *cli.App, args []string, cleanup func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			cleanup()
			stack := strings.Join(strings.Fields(string(debug.Stack())), " ")
			err = fmt.Errorf("%w: %v; please report it with the command line (stack: %s)", errPanic, r, stack)
		}
	}()
	return app.Run(args)
}
