package eval

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/schema"
)

// NewMIASettings describes the attacks behind m (nil when m has none).
func NewMIASettings(m *Metrics, opts MIAOptions) *schema.MIASettings {
	if m == nil || m.MIADetail == nil {
		return nil
	}
	o := opts.resolved()
	d := m.MIADetail
	s := &schema.MIASettings{
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
		s.Notes = append(s.Notes, fmt.Sprintf("the retain set has %d examples, fewer than the %d test examples: "+
			"all of them are shadow members (SalUn takes the first |test|)", s.ShadowMembers, s.ShadowNonMembers))
	}
	if d.LossNote != "" {
		s.Notes = append(s.Notes, "loss_lr left out: "+d.LossNote)
	}
	s.Notes = append(s.Notes, d.SVC.Notes...)
	return s
}

func hashFile(path string) (string, error) { return fsread.HashFile(path) }
