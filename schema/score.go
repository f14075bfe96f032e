package schema

// The files of a per-example forgetting audit (`unlearn score`, package
// unlearn/scoring): the folder's settings (settings.json), one file per
// task (tasks/oracle-NNNN.json, tasks/unlearned-NNNN.json) and the score
// (score.json). docs/SCORE.md says what the numbers mean.
const (
	ScoreSchema         = "unlearn.score/v1"
	ScoreSettingsSchema = "unlearn.score-settings/v1"
	ScoreTaskSchema     = "unlearn.score-task/v1"
)

// Task kinds (ScoreTask.Kind, ScoreModel.Kind).
const (
	ScoreOracle    = "oracle"
	ScoreUnlearned = "unlearned"
)

// ScoreSettings is a results folder's settings.json: what its tasks were
// run with. Every run and shard on the folder must have equal Setup (a
// difference is refused, naming the field); Paths are informative only,
// since a shared folder may be mounted elsewhere on another machine.
type ScoreSettings struct {
	Schema string     `json:"schema"`
	Setup  ScoreSetup `json:"setup"`
	Paths  ScorePaths `json:"paths"`
}

// ScoreSetup is everything the tasks' results depend on, identified by
// content (SHA-256), never by path.
type ScoreSetup struct {
	ModelSHA256 string `json:"model_sha256"`
	DataSHA256  string `json:"data_sha256"`
	// Mean and Std are the data's normalisation (empty: none).
	Mean []float32 `json:"mean,omitempty"`
	Std  []float32 `json:"std,omitempty"`
	// ForgetSHA256 hashes the ids file; Forget is its number of examples.
	ForgetSHA256 string `json:"forget_sha256"`
	Forget       int    `json:"forget"`
	// K is the number of models on each side; Method the unlearning run.
	// Both are absent from an oracles.json, whose oracles serve audits of
	// any method and K.
	K       int          `json:"k,omitempty"`
	Method  *ScoreMethod `json:"method,omitempty"`
	Recipe  ScoreRecipe  `json:"recipe"`
	Samples ScoreSamples `json:"samples"`
}

// ScoreMethod is the unlearning run (as unlearn.Job takes it): unlearned
// model k runs with seed Seed + k.
type ScoreMethod struct {
	Method    string  `json:"method,omitempty"`
	Strategy  string  `json:"strategy"`
	Algorithm string  `json:"algorithm"`
	Budget    float64 `json:"budget"`
	// DepthFloor is del's depth floor (unlearn.Job.DepthFloor; absent: 0).
	DepthFloor float64 `json:"depth_floor,omitempty"`
	Classifier string  `json:"classifier,omitempty"`
	Seed       uint64  `json:"seed"`
	// Config is the algorithm's resolved settings (unlearn.Config's
	// exported fields by their Go names, without the runtime and the
	// seed), for the record and the comparison.
	Config map[string]any `json:"config"`
}

// ScoreRecipe is how each oracle is trained from scratch without the forget
// set (`unlearn train --from-scratch --exclude`): oracle k with seed
// Seed + k.
type ScoreRecipe struct {
	Epochs      int     `json:"epochs"`
	LR          float64 `json:"lr"`
	Schedule    string  `json:"schedule"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`
	BatchSize   int     `json:"batch_size"`
	Augment     string  `json:"augment,omitempty"`
	Seed        uint64  `json:"seed"`
}

// ScoreSamples are the seeded samples of the retain set and the test split
// every model is evaluated on (sizes after capping at the split's size).
type ScoreSamples struct {
	Retain int    `json:"retain"`
	Test   int    `json:"test"`
	Seed   uint64 `json:"seed"`
}

// ScorePaths are the inputs as the first run on the folder named them.
type ScorePaths struct {
	Model  string `json:"model"`
	Data   string `json:"data"`
	Forget string `json:"forget"`
}

// ScoreTask is one task's result (tasks/KIND-NNNN.json): one trained or
// unlearned model's outputs on the forget set and the two samples.
type ScoreTask struct {
	Schema string `json:"schema"`
	// Settings is the SHA-256 of the folder's Setup (canonical JSON), so a
	// task file from another audit is never mixed in.
	Settings string `json:"settings_sha256"`
	Kind     string `json:"kind"`
	Index    int    `json:"index"`
	Seed     uint64 `json:"seed"`
	// ModelSHA256 hashes the model the task made; Model is its path
	// relative to the folder when it was kept (--keep-models).
	ModelSHA256 string         `json:"model_sha256"`
	Model       string         `json:"model,omitempty"`
	Forget      ScoreOutputs   `json:"forget"`
	Retain      ScoreOutputs   `json:"retain"`
	Test        ScoreOutputs   `json:"test"`
	Timings     ScoreTaskTimes `json:"timings"`
}

// ScoreOutputs are one model's per-example outputs on a set of examples,
// in the order of the report's example lists.
type ScoreOutputs struct {
	// Margins are z_y − log Σ_{j≠y} exp z_j (the logit-scaled confidence).
	Margins []float64 `json:"margins"`
	// Correct is 1 where the arg-max is the label, else 0.
	Correct []int `json:"correct"`
	// SVCNonMember (forget set only) is 1 where SalUn's SVC MIA on the
	// true label's confidence calls the example a non-member, else 0: the
	// attack fitted per model on the first |test sample| examples of the
	// retain sample (members) and the test sample (non-members), as
	// SalUn's SVC_MIA is. Absent from tasks written before it was recorded.
	SVCNonMember []int `json:"svc_non_member,omitempty"`
}

// ScoreTaskTimes are a task's seconds: training or unlearning (the
// algorithm's localize + unlearn time), and evaluating.
type ScoreTaskTimes struct {
	TrainS float64 `json:"train_s"`
	EvalS  float64 `json:"eval_s"`
}

// ScoreReport is score.json: the forgetting score of one method against
// retraining, from K models on each side.
type ScoreReport struct {
	Schema   string        `json:"schema"`
	Tool     string        `json:"tool,omitempty"`
	Settings ScoreSettings `json:"settings"`
	// MaxEpsilon is ⌈ln(K − 1)⌉: ε from there on scores 0.
	MaxEpsilon float64 `json:"max_epsilon"`
	// ForgetQuality is F (the competition's forgetting quality, higher is
	// better); FinalScore F · (RA_u/RA_r) · (TA_u/TA_r), the accuracies on
	// the retain and test samples averaged over each side's K models.
	ForgetQuality ScoreInterval  `json:"forget_quality"`
	FinalScore    *ScoreInterval `json:"final_score,omitempty"`
	// KLoM holds the mean KLoM over the forget set (with its interval)
	// and over the retain and test samples.
	KLoM     ScoreKLoM     `json:"klom"`
	Accuracy ScoreAccuracy `json:"accuracy"`
	// SVCMIA is SalUn's SVC MIA (true-label confidence) per side: the
	// share of the forget set called non-member, averaged over the side's
	// models (ScoreOutputs.SVCNonMember); absent where tasks lack it.
	SVCMIA ScoreSVCMIA `json:"svc_mia"`
	// ULiRA is the per-example likelihood-ratio attack between the two
	// sides' forget margins (eval/score.ULiRAScore); absent with K below 4
	// and in files written before it was computed.
	ULiRA     *ScoreULiRA    `json:"ulira,omitempty"`
	Bootstrap ScoreBootstrap `json:"bootstrap"`
	// Forget lists every forget example; Retain and Test the samples.
	Forget []ScoreForgetExample `json:"forget"`
	Retain []ScoreExample       `json:"retain"`
	Test   []ScoreExample       `json:"test"`
	// Models lists the 2K models, oracles first.
	Models  []ScoreModel `json:"models"`
	Timings ScoreTimings `json:"timings"`
}

// ScoreInterval is an estimate from all K models and its bootstrap
// interval over resampled models (eval/score.Interval).
type ScoreInterval struct {
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Shift    float64 `json:"bootstrap_shift"`
}

// ScoreKLoM are mean KLoMs (nats; 0: the unlearned and retrained margins'
// histograms agree).
type ScoreKLoM struct {
	Forget ScoreInterval `json:"forget"`
	Retain float64       `json:"retain"`
	Test   float64       `json:"test"`
	// Bins is how the histograms counted a margin on the top edge:
	// ScoreKLoMDigitize (left out, as the published code does) or
	// ScoreKLoMClosed (counted in the last bin). Absent in files written
	// before issue 47, which closed the last bin.
	Bins string `json:"bins,omitempty"`
}

// ScoreKLoM.Bins values.
const (
	ScoreKLoMDigitize = "digitize"
	ScoreKLoMClosed   = "closed"
)

// ScoreAccuracy are the mean accuracies of each side's K models.
type ScoreAccuracy struct {
	Unlearned ScoreSplits `json:"unlearned"`
	Retrained ScoreSplits `json:"retrained"`
}

// ScoreSplits are accuracies (fractions) on the forget set and the retain
// and test samples.
type ScoreSplits struct {
	Forget float64 `json:"forget"`
	Retain float64 `json:"retain"`
	Test   float64 `json:"test"`
}

// ScoreBootstrap records the intervals' settings.
type ScoreBootstrap struct {
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Seed      uint64  `json:"seed"`
}

// ScoreForgetExample is one forget example's evidence.
type ScoreForgetExample struct {
	// ID is the example's index in the training split.
	ID int `json:"id"`
	// Epsilon, How, Rule, FPR, FNR, RetrainedPositive and Points are
	// eval/score.Epsilon's: the best threshold test between the K
	// unlearned and K retrained margins and the example's bucket value.
	Epsilon           float64 `json:"epsilon"`
	How               string  `json:"how"`
	Rule              string  `json:"rule,omitempty"`
	FPR               float64 `json:"fpr"`
	FNR               float64 `json:"fnr"`
	RetrainedPositive bool    `json:"retrained_positive"`
	Points            float64 `json:"points"`
	KLoM              float64 `json:"klom"`
	// UnlearnedCorrect and RetrainedCorrect are the fractions of each
	// side's models that classify the example correctly.
	UnlearnedCorrect float64 `json:"unlearned_correct"`
	RetrainedCorrect float64 `json:"retrained_correct"`
	// UnlearnedSVCNonMember and RetrainedSVCNonMember are the fractions of
	// each side's models whose SVC MIA calls the example a non-member
	// (ScoreOutputs.SVCNonMember); absent where a side's tasks lack it.
	UnlearnedSVCNonMember *float64 `json:"unlearned_svc_non_member,omitempty"`
	RetrainedSVCNonMember *float64 `json:"retrained_svc_non_member,omitempty"`
	// ULiRA is U-LiRA's balanced accuracy on this example over its K + K
	// targets (ScoreReport.ULiRA); absent where the report has none.
	ULiRA *float64 `json:"ulira,omitempty"`
}

// ScoreULiRA is U-LiRA on the audit's models: per forget example, Gaussians
// fitted to the margins of shadow unlearned and shadow retrained models
// score held-out target models by their likelihood ratio (docs/SCORE.md).
type ScoreULiRA struct {
	// Accuracy is the attack's balanced accuracy, the mean over the forget
	// set of each example's (ScoreForgetExample.ULiRA), with its bootstrap
	// interval over the models: 0.5 means the unlearned models cannot be
	// told from retrained ones, 1 that every target is told apart.
	Accuracy ScoreInterval `json:"accuracy"`
	// AUC is the ROC area of the likelihood ratios of all (example,
	// target) pairs, one threshold for every example.
	AUC float64 `json:"auc"`
	// Folds is the number of folds each side's K models are split into;
	// Shadows the fewest shadow models per side in a fold; Targets the
	// targets per side and example (K).
	Folds   int `json:"folds"`
	Shadows int `json:"shadows"`
	Targets int `json:"targets"`
	// Variance is "global" (one variance per side, pooled over the forget
	// examples) or "per_example".
	Variance string `json:"variance"`
}

// ScoreSVCMIA is the SVC MIA's mean verdict on the forget set per side.
type ScoreSVCMIA struct {
	Unlearned *float64 `json:"unlearned,omitempty"`
	Retrained *float64 `json:"retrained,omitempty"`
}

// ScoreExample is a retain or test example's KLoM.
type ScoreExample struct {
	ID   int     `json:"id"`
	KLoM float64 `json:"klom"`
}

// ScoreModel is one model of the audit.
type ScoreModel struct {
	Kind        string         `json:"kind"`
	Index       int            `json:"index"`
	Seed        uint64         `json:"seed"`
	ModelSHA256 string         `json:"model_sha256"`
	Accuracy    ScoreSplits    `json:"accuracy"`
	Timings     ScoreTaskTimes `json:"timings"`
}

// ScoreTimings are the gathering step's seconds.
type ScoreTimings struct {
	GatherS float64 `json:"gather_s"`
}
