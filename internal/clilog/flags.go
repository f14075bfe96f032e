package clilog

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/internal/taskindex"
)

// MaxThreadsPerCore bounds --threads: more intra-op threads than a few per
// core only add contention, and a huge count creates that many OS threads.
const MaxThreadsPerCore = 4

// MaxBatchSize bounds --batch-size; batches are also never larger than the
// examples they hold, so memory follows the data, not the flag.
const MaxBatchSize = 1 << 20

// CheckFlagValues refuses, before any work, a numeric flag of c that is
// not a finite number (NaN or ±Inf parse as floats, and NaN compares false
// with every bound, so it would slip past later checks or be taken for
// "unset"), a --threads beyond MaxThreadsPerCore per core and a
// --batch-size beyond MaxBatchSize. Then, for a command with --shard run
// with --shards and without --shard, it sets --shard to the batch engine's
// task index (shardFromEnv). Its errors wrap ErrUsage.
func CheckFlagValues(c *cli.Context) error {
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
			case name == "threads" && v > MaxThreadsPerCore*cores:
				return usagef("--threads %d: at most %d on this machine (%d per core, %d cores)", v, MaxThreadsPerCore*cores, MaxThreadsPerCore, cores)
			case name == "batch-size" && v > MaxBatchSize:
				return usagef("--batch-size %d: at most %d", v, MaxBatchSize)
			}
		}
	}
	if c.IsSet("shard") && c.Int("shards") == 0 {
		return usagef("--shard %d needs --shards", c.Int("shard"))
	}
	return shardFromEnv(c)
}

// InRange is the Action of an integer flag that must lie in [lo, hi] (lo
// math.MinInt: at most hi), checked before the command runs; why ends the
// error's text.
func InRange(name string, lo, hi int, why string) func(*cli.Context, int) error {
	return func(_ *cli.Context, v int) error {
		switch {
		case lo == math.MinInt && v > hi:
			return usagef("--%s %d: at most %d%s", name, v, hi, why)
		case lo != math.MinInt && (v < lo || v > hi):
			return usagef("--%s %d: must be in [%d, %d]%s", name, v, lo, hi, why)
		}
		return nil
	}
}

// shardFromEnv sets --shard of a sharded run (--shards > 0) given no
// --shard to the task index the batch engine set ($JOB_COMPLETION_INDEX or
// $SLURM_ARRAY_TASK_ID, read strictly by taskindex.FromEnv). Without
// --shards the variables are not read: a Slurm array task (or an Indexed
// Job pod) may run a whole audit, e.g. one method per task.
func shardFromEnv(c *cli.Context) error {
	if c.Command == nil || !slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return f.Names()[0] == "shard" }) ||
		c.IsSet("shard") || c.Int("shards") == 0 {
		return nil
	}
	i, _, ok, err := taskindex.FromEnv()
	if err != nil {
		return usagef("%v (--shards %d takes this task's shard from it)", err, c.Int("shards"))
	}
	if ok {
		return c.Set("shard", strconv.Itoa(i))
	}
	return nil
}

// ErrPanic marks a panic turned into an error by RunRecovered.
var ErrPanic = errors.New("internal error")

// RunRecovered runs the app and turns a panic of the command's goroutine
// into an error (with the stack on one line) after calling cleanup, so that
// the run still ends with one error line, or one JSON error event with
// --log-format json, and its temporary files removed.
func RunRecovered(app *cli.App, args []string, cleanup func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			cleanup()
			stack := strings.Join(strings.Fields(string(debug.Stack())), " ")
			err = fmt.Errorf("%w: %v; please report it with the command line (stack: %s)", ErrPanic, r, stack)
		}
	}()
	return app.Run(args)
}
