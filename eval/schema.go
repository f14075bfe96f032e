package eval

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/train"
)

// Schema is the version tag of metrics.json. Fields may be added within a
// version; none is removed or changes meaning.
const Schema = "unlearn.metrics/v1"

// Report is metrics.json (schema unlearn.metrics/v1): the evaluated
// model's Metrics inline at the top level (accuracy, counts, per_class, mia,
// timings), the same for the oracle under "oracle", oracle − model under
// "delta" and the agreement of their predictions. `unlearn eval` writes it;
// a command that unlearns can fill Before with the original model's section
// and keep the unlearned model at the top level. README.md documents every
// field.
type Report struct {
	Schema   string      `json:"schema"`
	Tool     string      `json:"tool,omitempty"`
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

// Unlearning is what an unlearning run did: its settings, mask, algorithm
// log, the audit of the changed parameters and its timings.
type Unlearning struct {
	Method      string  `json:"method"`
	Strategy    string  `json:"strategy"`
	Algorithm   string  `json:"algorithm"`
	Budget      float64 `json:"budget"`
	Epochs      int     `json:"epochs"`
	LR          float64 `json:"lr"`
	BatchSize   int     `json:"batch_size"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`
	Seed        uint64  `json:"seed"`
	// Schedule is "fixed" (Epochs at LR) or "auto" (Auto says what it
	// chose; Epochs and LR are then the epochs trained and the rate used).
	Schedule string        `json:"schedule"`
	Auto     *AutoSchedule `json:"auto,omitempty"`
	// Proxies are the oracle-free proxies (held-out retain utility, the
	// forget set against class-matched test examples, a proxy MIA) before,
	// during and after the run; absent with --proxies=false.
	Proxies *ProxyLog `json:"proxies,omitempty"`
	// Mask summarizes the localization (selected parameters per layer; the
	// element lists go to a separate mask file).
	Mask *localize.MaskSummary `json:"mask,omitempty"`
	// Log is the algorithm's per-epoch loss and accuracy and what it reset.
	Log *RunLog `json:"log,omitempty"`
	// Audit lists the tensors whose bytes differ from the input model.
	Audit *Audit `json:"audit,omitempty"`
	// Notes report what the run adjusted or could not do.
	Notes   []string          `json:"notes,omitempty"`
	Timings UnlearningTimings `json:"timings"`
	// RetrainEstimateS estimates retraining from scratch on the retain
	// set: seconds per retain epoch measured by the run × RetrainEpochs.
	RetrainEstimateS float64 `json:"retrain_estimate_s,omitempty"`
	RetrainEpochs    int     `json:"retrain_epochs,omitempty"`
	// Speedup is RetrainEstimateS / (localize + unlearn seconds).
	Speedup float64 `json:"speedup,omitempty"`
}

// RunLog is what an algorithm reported: per-epoch mean loss, accuracy and
// seconds, the elements it re-initialised (rft) and its notes.
type RunLog struct {
	Epochs []train.EpochStats `json:"epochs"`
	Notes  []string           `json:"notes"`
	Reset  int                `json:"reset"`
}

// Audit is what an unlearning run changed, checked against the input
// model's initializers: the changed tensors, the counts, and whether every
// element outside what the run was allowed to change is bit-identical.
type Audit struct {
	// Tensors that differ, sorted by name.
	Changed []TensorChange `json:"changed"`
	// UnchangedTensors counts initializers that are bit-identical.
	UnchangedTensors int `json:"unchanged_tensors"`
	// ChangedParams counts changed elements of trainable parameters;
	// TotalParams is the number of trainable elements.
	ChangedParams int64 `json:"changed_params"`
	TotalParams   int64 `json:"total_params"`
	// ChangedState counts changed elements of other initializers
	// (BatchNormalization running statistics).
	ChangedState int64 `json:"changed_state"`
	// Violations lists changes outside what was allowed; empty in every
	// correct run.
	Violations []string `json:"violations"`
	// BitIdentical is true when every element outside the allowed set is
	// bit-identical to the input.
	BitIdentical bool `json:"outside_mask_bit_identical"`
}

// TensorChange describes one changed initializer.
type TensorChange struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // parameter role, or "state"
	Elements int64  `json:"elements"`
	Changed  int64  `json:"changed"`
	// Channels lists the output channels with at least one changed element
	// (trainable parameters in a layer).
	Channels []int  `json:"channels,omitempty"`
	Layer    string `json:"layer,omitempty"`
}

// UnlearningTimings are wall-clock seconds of the run's stages.
type UnlearningTimings struct {
	EvaluateBeforeS float64 `json:"evaluate_before_s"`
	LocalizeS       float64 `json:"localize_s"`
	UnlearnS        float64 `json:"unlearn_s"`
	EvaluateAfterS  float64 `json:"evaluate_after_s"`
	TotalS          float64 `json:"total_s"`
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
}

// Settings record how the numbers were made.
type Settings struct {
	BatchSize int          `json:"batch_size"`
	Device    string       `json:"device"`
	Threads   int          `json:"threads"`
	MIA       *MIASettings `json:"mia,omitempty"`
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

// NewMIASettings describes the attacks behind m (nil when m has none).
func NewMIASettings(m *Metrics, opts MIAOptions) *MIASettings {
	if m == nil || m.MIADetail == nil {
		return nil
	}
	o := opts.resolved()
	d := m.MIADetail
	s := &MIASettings{
		ShadowMembers:    d.SVC.Members.N,
		ShadowNonMembers: d.SVC.NonMembers.N,
		Target:           d.SVC.Target.N,
		SVCC:             o.SVC.C,
		SVCGamma:         "auto (1/n_features)",
		SVCTol:           o.SVC.Tol,
		MEntropy:         o.MEntropy.String(),
		LossSplits:       o.Splits,
		LossTestFraction: o.TestFraction,
		LossC:            o.C,
		Seed:             o.Seed,
	}
	if s.SVCC == 0 {
		s.SVCC = 3
	}
	if s.SVCTol == 0 {
		s.SVCTol = 1e-3
	}
	if o.SVC.Gamma != 0 {
		s.SVCGamma = fmt.Sprint(o.SVC.Gamma)
	}
	if d.Loss != nil {
		s.LossPerClass = d.Loss.PerClass
	}
	if s.ShadowMembers < s.ShadowNonMembers {
		s.Notes = append(s.Notes, fmt.Sprintf("the retain set has %d examples, fewer than the %d test examples: all of them are shadow members (SalUn takes the first |test|)", s.ShadowMembers, s.ShadowNonMembers))
	}
	if d.LossNote != "" {
		s.Notes = append(s.Notes, "loss_lr left out: "+d.LossNote)
	}
	s.Notes = append(s.Notes, d.SVC.Notes...)
	return s
}

// HashPath returns the SHA-256 of a file, or of a folder's content: the
// hash of the lines "<sha256 of file>  ./<path relative to the folder>\n"
// of every regular file below it, sorted by path, which is what
//
//	(cd DIR && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum
//
// prints for names without spaces or special characters. Hidden files are
// included; symbolic links are followed for the top path only. The
// implementation is internal/fsread's, which train shares.
func HashPath(path string) (string, error) { return fsread.HashPath(path) }

func hashFile(path string) (string, error) { return fsread.HashFile(path) }
