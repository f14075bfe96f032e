// Package scoring runs a per-example forgetting audit (`unlearn score`):
// K oracles trained from scratch without the forget set (unlearn.Retrain)
// and K runs of one unlearning method on the original with different seeds
// (unlearn.Unlearn), every model evaluated on the forget set and on seeded
// samples of the retain set and the test split, then scored with package
// eval/score (the NeurIPS 2023 competition's forget quality F and final
// score, KLoM and U-LiRA per example, bootstrap intervals over the
// models).
//
// # Tasks, caching and sharding
//
// The 2K models are 2K independent tasks: index k < K trains oracle k
// (seed Recipe.Seed + k), index K + k runs unlearned model k (seed
// Config.Seed + k). Oracles come first so that round-robin shards get a
// mix of both kinds. Each task writes its result atomically to
// Dir/tasks/KIND-NNNN.json (schema.ScoreTask: margins and correctness
// per example, accuracies, seconds; the model itself only with
// KeepModels, under Dir/models/). A task whose file exists is skipped, so
// a run resumes where it stopped. With Shards = N a run does only the
// tasks whose index ≡ Shard (mod N): one task of a batch engine (a
// Kubernetes Indexed Job sets JOB_COMPLETION_INDEX, a Slurm job array
// SLURM_ARRAY_TASK_ID), never a scheduler of our own. Work in progress
// lives in a temporary folder under Dir/work/.
//
// Dir/settings.json (schema.ScoreSettings) records what the folder's tasks
// were run with: the SHA-256 of the model, data and forget ids, K, the
// method, the oracles' recipe and the samples. Every run compares its own
// settings with it first and refuses a difference, naming it, so results
// of two audits never mix.
//
// # Gathering
//
// When every task's file is present, an unsharded run (or Gather) reads
// them back, checks each against the settings, and writes the score
// (schema.ScoreReport, score.json) and its HTML section (eval/report's
// ScoreHTML). The score is computed from the files only, so a folder
// filled by N shards on N machines scores exactly as one filled by one
// process.
package scoring
