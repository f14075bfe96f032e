package eval

import (
	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// SuiteSettings are a suite's settings as a caller states them, by name:
// the examples per forward pass,
// the attacks' modified-entropy feature ("song-mittal" or "salun-code")
// and their seed. Runtime and NoMIA are taken as they are.
type SuiteSettings struct {
	MEntropy  string
	BatchSize int
	NoMIA     bool
	MIASeed   uint64
}

// Options checks s and returns the suite's Options (without Runtime); an
// error names the setting at fault (batch-size, m-entropy).
func (s SuiteSettings) Options() (Options, error) {
	opts := Options{BatchSize: s.BatchSize, NoMIA: s.NoMIA}
	opts.MIA.Seed = s.MIASeed
	if s.BatchSize <= 0 {
		return opts, setting.Errorf("batch-size", " %d: must be positive", s.BatchSize)
	}
	switch s.MEntropy {
	case "song-mittal":
		opts.MIA.MEntropy = MEntropySongMittal
	case "salun-code":
		opts.MIA.MEntropy = MEntropySalUnCode
	default:
		return opts, setting.Errorf("m-entropy", " %q: must be song-mittal or salun-code", s.MEntropy)
	}
	return opts, nil
}

// OpenSuite is NewSuite for the forget set of the ids file forgetPath
// ("": none), read against ds's training split (data.ReadForget).
func OpenSuite(ds *data.Dataset, forgetPath string, opts Options) (*Suite, error) {
	var ids []int
	var given string
	if forgetPath != "" {
		var err error
		if ids, given, err = data.ReadForget(forgetPath, ds.Train); err != nil {
			return nil, err
		}
	}
	s, err := NewSuite(ds, forgetPath, ids, opts)
	if err != nil {
		return nil, err
	}
	s.ForgetGiven = given
	return s, nil
}
