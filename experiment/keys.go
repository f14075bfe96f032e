package experiment

import (
	"fmt"
	"strconv"
	"strings"
)

// The cache keys of an experiment's steps. A key names a step's folder
// under out/runs/ and its record in results.jsonl, so a step whose key has
// a record never runs again: a change to any of these functions (their
// parts, their order, the JSON of a part) silently reruns hours of
// committed grid. TestKeysPinned pins them.

// OriginalKey keys the original trained from scratch for seed: the
// architecture's and the data's SHA-256 (fsread.HashPath), the training
// recipe and the seed.
func OriginalKey(baseSum, dataSum string, train Recipe, seed uint64) string {
	return Key("original", baseSum, dataSum, train, seed)
}

// IDsFile is the ids file of a forget set for a seed: a comment line that
// describes the draw, then one id per line. A drawn set's text is hashed
// into IDsKey, so its format is part of every oracle's and run's key.
func IDsFile(fs ForgetSet, seed uint64, ids []int) string {
	var b strings.Builder
	if fs.Kind == "file" {
		fmt.Fprintf(&b, "# forget set %s (from %s), seed %d: %d ids\n", fs.Name, SeedPath(fs.IDs, seed), seed, len(ids))
	} else {
		fmt.Fprintf(&b, "# forget set %s (%s, fraction %g, classes %v), seed %d: %d ids\n", fs.Name, fs.Kind, fs.Fraction,
			fs.Classes, seed, len(ids))
	}
	for _, id := range ids {
		b.WriteString(strconv.Itoa(id) + "\n")
	}
	return b.String()
}

// IDsKey keys a forget set of a seed by what it holds, never by where it
// was read: a drawn set by its ids file's text (IDsFile), a set read from
// a file (kind "file") by its name, the seed and its ids (sorted), so that
// moving the file or the folder it sits in keeps every key.
func IDsKey(fs ForgetSet, seed uint64, ids []int) string {
	if fs.Kind == "file" {
		return Key("ids", fs.Name, seed, ids)
	}
	return Key(IDsFile(fs, seed, ids))
}

// OracleKey keys the oracle of a forget set: OriginalKey's parts and the
// forget set's IDsKey.
func OracleKey(baseSum, dataSum string, train Recipe, seed uint64, idsKey string) string {
	return Key("oracle", baseSum, dataSum, train, seed, idsKey)
}

// OutsideOracleKey keys an oracle trained outside the tool
// (ForgetSet.Oracle) by its file's and the data's SHA-256, the seed and the
// forget set's IDsKey.
func OutsideOracleKey(oracleSum, dataSum string, seed uint64, idsKey string) string {
	return Key("outside-oracle", oracleSum, dataSum, seed, idsKey)
}

// OracleTimeKey keys the retraining of an oracle on machine (a machine
// name as records hold it) for its training time alone.
func OracleTimeKey(oracleKey, machine string) string { return Key(oracleKey, machine) }

// OriginalRef keys the model a seed's runs unlearn by its identity and the
// seed: id is the config's model's SHA-256, or the OriginalKey of an
// original the runner trains. It never holds a path, so that a results
// folder can move without its records becoming cache misses.
func OriginalRef(id string, seed uint64) string { return Key("original-ref", id, seed) }

// RunKey keys one run of method m at budget (0: none) for a seed and
// forget set, against its original (OriginalRef) and oracle (OracleKey),
// with or without the attacks. An auto-schedule row is keyed by the auto
// rule's version (autoVersion, unlearn.AutoVersion; version 1 keys predate
// it) and a default row by the recommended default's description
// (recommended: the runner's encoding of unlearn.RecommendedSettings), so
// a changed rule or default runs them again.
func RunKey(m Method, budget float64, seed uint64, idsKey, origRef, oracleKey string, noMIA bool, autoVersion int,
	recommended string) string {
	key := Key("run", m, budget, seed, idsKey, origRef, oracleKey, noMIA)
	if m.Schedule == "auto" && autoVersion > 1 {
		key = Key(key, "auto", autoVersion)
	}
	if m.Default {
		key = Key(key, "default", recommended)
	}
	return key
}
