// Package taskindex reads the index a batch engine gives one task of an
// array of tasks: $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or
// $SLURM_ARRAY_TASK_ID (a Slurm job array). `unlearn score` and
// `unlearn experiment` take their shard from it when --shards is set and
// --shard is not.
package taskindex

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/unlearn-tool/unlearn/internal/setting"
)

// Vars are the variables read, in this order.
var Vars = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}

// ErrIndex marks a malformed or conflicting index.
var ErrIndex = errors.New("task index")

// FromEnv returns the task index and the variable it came from (ok false
// when none is set). A value must be decimal digits (no sign, no 0x, not
// empty), as the engines write it; two variables set to different values
// are refused: the task would not know which index is its own.
func FromEnv() (index int, from string, ok bool, err error) {
	for _, name := range Vars {
		v, set := os.LookupEnv(name)
		if !set {
			continue
		}
		i, err := Parse(v)
		if err != nil {
			return 0, name, false, fmt.Errorf("%w: $%s=%q: %v", ErrIndex, name, v, err)
		}
		if ok && i != index {
			return 0, name, false, setting.FlagTextf("%w: $%s=%d and $%s=%d disagree on this task's shard: "+
				"unset one, or give %s",
				ErrIndex, from, index, name, i, setting.Of("shard"))
		}
		index, from, ok = i, name, true
	}
	return index, from, ok, nil
}

// Parse reads one task index: decimal digits only.
func Parse(v string) (int, error) {
	if v == "" {
		return 0, errors.New("empty; want a task index, a decimal number ≥ 0")
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return 0, errors.New("not a task index: want a decimal number ≥ 0")
		}
	}
	i, err := strconv.Atoi(v)
	if err != nil { // only a number too large for an int is left
		return 0, errors.New("task index out of range")
	}
	return i, nil
}

// Array says how to run n shards as tasks of a batch engine, each given
// its index 0..n-1 (for messages that must say what to set).
func Array(n int) string {
	return fmt.Sprintf("a Kubernetes Indexed Job with completions: %d, "+
		"or a Slurm job array submitted with --array=0-%d", n, n-1)
}

// Unsharded says what a run without shards does in a task of a batch
// engine's array (a variable of Vars set), which used to be silent: where
// a whole run per task is the documented use (wholeRun: an audit per array
// task, one method each), it returns a one-line warning that the index is
// not read; otherwise (an experiment, whose every task would run the whole
// grid) an error naming the variable and the shards setting. Both are nil when no
// variable is set; both name the setting as internal/setting does.
func Unsharded(command string, wholeRun bool) (warning, err error) {
	for _, name := range Vars {
		v, set := os.LookupEnv(name)
		if !set {
			continue
		}
		if len(v) > 20 {
			v = v[:20] + "…"
		}
		if wholeRun {
			return setting.FlagTextf("$%s=%s is set and %s is not: this task runs its whole %s (as for one method per "+
				"array task); to share one among the tasks give %s", name, v, setting.Of("shards"), command,
				setting.Use("shards", "N")), nil
		}
		return nil, setting.FlagTextf("%w: $%s=%s is set but %s is not: every task of the array would run the whole %s; "+
			"give %s (the array's size), or run it outside an array", ErrIndex, name, v, setting.Of("shards"), command,
			setting.Use("shards", "N"))
	}
	return nil, nil
}

// Shard checks the shards and shard settings of a sharded run before any
// work and returns the shard to run: shards is 0 (no sharding) or a count
// of shards, and shard (given says whether it was set) needs it. Given
// shards and no shard, the shard is the task index of FromEnv, and a run
// with neither is refused: a Job that is not Indexed, or a plain batch job,
// would otherwise run one shard in every task. A gathering run takes no
// shard. Without shards the variables are not read: an array task may run
// a whole audit, e.g. one method per task (see Unsharded).
func Shard(shards, shard int, given, gather bool) (int, error) {
	switch {
	case shards < 0:
		return 0, setting.FlagErrorf("shards", " %d: must be 0 (no sharding) or the number of shards, 1 or more",
			shards)
	case shards == 0 && given:
		return 0, setting.FlagErrorf("shard", " %d needs %s", shard, setting.Of("shards"))
	case shards == 0:
		return shard, nil
	case gather:
		return 0, setting.FlagTextf("%s %s: gathering reads every shard's results; give no %s or %s",
			setting.Of("gather"), setting.Use("shards", shards), setting.Of("shards"), setting.Of("shard"))
	case given:
		if shard < 0 || shard >= shards {
			return 0, setting.FlagErrorf("shard", " %d: must be in [0, %d) for %s", shard, shards,
				setting.Use("shards", shards))
		}
		return shard, nil
	}
	i, from, ok, err := FromEnv()
	switch {
	case err != nil:
		return 0, setting.FlagTextf("%s (%s without %s takes this run's shard from it)", err,
			setting.Use("shards", shards), setting.Of("shard"))
	case !ok:
		return 0, setting.FlagTextf("%s without %s: give %s (0 ≤ I < %d), or run each shard as one "+
			"task of %s (they set $JOB_COMPLETION_INDEX and $SLURM_ARRAY_TASK_ID)",
			setting.Use("shards", shards), setting.Of("shard"), setting.Use("shard", "I"), shards, Array(shards))
	case i >= shards:
		return 0, setting.FlagTextf("$%s=%d: no such shard of %s (shards are 0 to %d); run the shards as %s",
			from, i, setting.Use("shards", shards), shards-1, Array(shards))
	}
	return i, nil
}
