package main

import (
	"errors"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"
)

// shardEnv are the variables a batch engine sets to the index of one task
// of an array of tasks: a Kubernetes Indexed Job and a Slurm job array.
var shardEnv = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}

// shardFlag is the --shard flag of score and experiment. It reads no
// variable itself (cli parses an int from the environment with base 0 and
// ignores an empty value); shardIndex does.
func shardFlag(usage string) cli.Flag {
	return &cli.IntFlag{Name: "shard", Usage: usage + "; unset, with --shards: $JOB_COMPLETION_INDEX (Kubernetes) or $SLURM_ARRAY_TASK_ID (Slurm), else 0"}
}

// shardIndex is the shard this process runs: --shard when given;
// otherwise, with --shards, the task index of the batch engine that
// started it, from $JOB_COMPLETION_INDEX (Kubernetes) or
// $SLURM_ARRAY_TASK_ID (Slurm); otherwise 0. Without --shards the variables
// are not read: a Slurm array task (or an Indexed Job pod) may run a whole
// audit, e.g. one method per task. A variable's value must be a decimal
// number (no sign, no 0x), and two set to different values are refused:
// this process would not know which shard is its own.
func shardIndex(c *cli.Context) (int, error) {
	if c.IsSet("shard") || c.Int("shards") == 0 {
		return c.Int("shard"), nil
	}
	from, shard := "", 0
	for _, name := range shardEnv {
		v, ok := os.LookupEnv(name)
		if !ok {
			continue
		}
		i, err := parseIndex(v)
		if err != nil {
			return 0, usagef("$%s=%q: %v (--shards %d takes this task's shard from it)", name, v, err, c.Int("shards"))
		}
		if from != "" && i != shard {
			return 0, usagef("$%s=%d and $%s=%d disagree on this task's shard: unset one, or give --shard", from, shard, name, i)
		}
		from, shard = name, i
	}
	return shard, nil
}

// parseIndex reads a task index: decimal digits only, as the batch engines
// write it.
func parseIndex(v string) (int, error) {
	if v == "" {
		return 0, errEmptyIndex
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return 0, errIndexDigits
		}
	}
	i, err := strconv.Atoi(v)
	if err != nil { // only a number too large for an int is left
		return 0, errIndexRange
	}
	return i, nil
}

var (
	errEmptyIndex  = errors.New("empty; want a task index, a decimal number ≥ 0")
	errIndexDigits = errors.New("not a task index: want a decimal number ≥ 0")
	errIndexRange  = errors.New("task index out of range")
)
