package schema

// MetricsSchema is the version tag of metrics.json (Report.Schema).
// Fields may be added within a version; none is removed or changes
// meaning.
const MetricsSchema = "unlearn.metrics/v1"

// MaskSchema is the version tag of a mask file and of its summary in
// metrics.json (MaskSummary.Schema).
const MaskSchema = "unlearn.mask/v1"

// Report is metrics.json (schema unlearn.metrics/v1): the evaluated
// model's Metrics inline at the top level (accuracy, counts, per_class, mia,
// timings), the same for the oracle under "oracle", oracle − model under
// "delta" and the agreement of their predictions. `unlearn eval` writes it;
// a command that unlearns can fill Before with the original model's section
// and keep the unlearned model at the top level. docs/FORMATS.md documents
// every field.
type Report struct {
	Schema string `json:"schema"`
	Tool   string `json:"tool,omitempty"`
	// Summary is an unlearning run's outcome in a few flat fields (absent
	// from `unlearn eval` and from files written before it existed).
	Summary  *Summary    `json:"summary,omitempty"`
	Model    *ModelInfo  `json:"model"`
	Data     *DataInfo   `json:"data"`
	Forget   *ForgetInfo `json:"forget,omitempty"`
	Settings Settings    `json:"settings"`
	*Metrics
	Oracle    *Section   `json:"oracle,omitempty"`
	Delta     *Delta     `json:"delta,omitempty"`
	Agreement *Agreement `json:"agreement,omitempty"`
	Before    *Section   `json:"before,omitempty"`
	// Unlearning describes the run that produced the model (set by the
	// unlearning command, absent from `unlearn eval`).
	Unlearning *Unlearning `json:"unlearning,omitempty"`
}

// Section is one more model's metrics within a Report.
type Section struct {
	Model *ModelInfo `json:"model"`
	*Metrics
}

// ModelInfo identifies a model file.
type ModelInfo struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// DataInfo identifies the dataset.
type DataInfo struct {
	Path       string    `json:"path"`
	Format     string    `json:"format"`
	Name       string    `json:"name"`
	SHA256     string    `json:"sha256"`
	Classes    int       `json:"classes"`
	ClassNames []string  `json:"class_names,omitempty"`
	Mean       []float32 `json:"mean,omitempty"`
	Std        []float32 `json:"std,omitempty"`
}

// ForgetInfo identifies the forget set.
type ForgetInfo struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	N      int    `json:"n"`
	// Given is how the file named the examples: "ids" (positions in the
	// training split) or "names" (image files of an image folder); absent
	// in reports written before it existed and for forget sets not read
	// from a file by the command line.
	Given string `json:"given,omitempty"`
}

// Settings record how the numbers were made.
type Settings struct {
	BatchSize int    `json:"batch_size"`
	Device    string `json:"device"`
	// Threads is the intra-op thread count asked for; 0 is the default.
	Threads int `json:"threads"`
	// ThreadsUsed is the intra-op thread count ONNX Runtime ran with: Threads,
	// or for 0 the cores the process may use within its cgroup's CPU quota
	// (onnxrt.DefaultThreads). Absent in reports written before it existed.
	ThreadsUsed int          `json:"threads_used,omitempty"`
	MIA         *MIASettings `json:"mia,omitempty"`
}

// MIASettings record the attacks' configuration and group sizes.
type MIASettings struct {
	ShadowMembers    int     `json:"shadow_members"`
	ShadowNonMembers int     `json:"shadow_non_members"`
	Target           int     `json:"target"`
	SVCC             float64 `json:"svc_c"`
	SVCGamma         string  `json:"svc_gamma"`
	SVCTol           float64 `json:"svc_tol"`
	MEntropy         string  `json:"m_entropy"`
	LossSplits       int     `json:"loss_splits"`
	LossTestFraction float64 `json:"loss_test_fraction"`
	LossC            float64 `json:"loss_c"`
	LossPerClass     int     `json:"loss_per_class"`
	Seed             uint64  `json:"seed"`
	// Notes report adjustments: fewer retain examples than test examples,
	// a loss attack left out, an SVC stopped at its iteration cap.
	Notes []string `json:"notes,omitempty"`
}

// ExitNotVouched is the exit status of the main command under --strict
// when the run is not vouched for (Summary.StrictExitCode).
const ExitNotVouched = 3

// Summary is what a pipeline reads of an unlearning run without knowing
// the rest of metrics.json: whether the run vouches for its result and
// why not, its stated tolerances, the forget and test accuracy before and
// after, the oracle-free estimate of an oracle's, and the exit status the
// run implies under --strict. Accuracies and tolerances are fractions;
// a value the run did not measure is absent.
type Summary struct {
	Vouched bool `json:"vouched"`
	// Flags are the kinds of the run's warnings about its result
	// (Unlearning.Flags), [] for none.
	Flags []string `json:"flags"`
	// ForgetTolerance and TestTolerance are the tolerances the run states:
	// the verdict's (Unlearning.Tolerances) where it states them, else
	// the auto schedule's rule's (AutoSchedule.ForgetTolerance,
	// UtilityTolerance); absent for a fixed recipe.
	ForgetTolerance *float64 `json:"forget_tolerance,omitempty"`
	TestTolerance   *float64 `json:"test_tolerance,omitempty"`
	// ForgetAccuracyBefore and TestAccuracyBefore are the input model's.
	ForgetAccuracyBefore *float64 `json:"forget_accuracy_before,omitempty"`
	TestAccuracyBefore   *float64 `json:"test_accuracy_before,omitempty"`
	ForgetAccuracy       *float64 `json:"forget_accuracy,omitempty"`
	TestAccuracy         float64  `json:"test_accuracy"`
	// OracleEstimateForget and OracleEstimateTest are the oracle-free
	// estimate of an oracle's forget and test accuracy
	// (Unlearning.Proxies.Estimate), without the proxies absent.
	OracleEstimateForget *float64 `json:"oracle_estimate_forget_accuracy,omitempty"`
	OracleEstimateTest   *float64 `json:"oracle_estimate_test_accuracy,omitempty"`
	// StrictExitCode is the main command's exit status under --strict: 0
	// when vouched for, else ExitNotVouched.
	StrictExitCode int `json:"strict_exit_code"`
}
