package unlearn

import (
	"context"
	"fmt"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
)

// LocalizeJob computes a mask on its own (the localize command), for a
// later run to take instead of localizing: the model at ModelPath, the
// forget set of ForgetPath's ids in Data's training split, and Options
// (its Runtime and Progress the caller's). ScoresPath, when set, is where
// the per-parameter scores are written (safetensors).
type LocalizeJob struct {
	ModelPath, ForgetPath, ScoresPath string
	Options                           localize.Options
	Data                              *data.Dataset
}

// Validate checks the settings before any work; an error names the field
// at fault by its path ("Options.Budget").
func (j *LocalizeJob) Validate() error {
	o := &j.Options
	if !(o.Budget > 0 && o.Budget <= 1) {
		return setting.FieldErrorf("Options.Budget", " %g: must be in (0, 1]", o.Budget)
	}
	st, err := localize.LookupStrategy(o.Strategy)
	if err != nil {
		return setting.FieldErrorf("Options.Strategy", " %q: unknown; choose one of %v", o.Strategy,
			localize.Strategies())
	}
	if j.ScoresPath != "" && !st.Scores {
		return setting.FieldErrorf("ScoresPath", ": strategy %s computes no scores (del, salloc and critmem do)",
			st.Name)
	}
	if o.TopK < 0 {
		return setting.FieldErrorf("Options.TopK", " %d: must be ≥ 0", o.TopK)
	}
	if err := CheckDepthFloor(o.DepthFloor, st.Name); err != nil {
		return setting.FieldWrap("Options.DepthFloor", err)
	}
	return nil
}

// Localize runs j: it checks the model against the data, reads the forget
// set, localizes, and writes the scores when asked. It returns the mask,
// which the caller writes; ErrInterrupted when ctx was cancelled.
func Localize(ctx context.Context, j LocalizeJob) (*localize.Mask, error) {
	_, work, _, err := PrepareModel(j.ModelPath)
	if err != nil {
		return nil, err
	}
	if err := infer.CheckModelData(work, j.ModelPath, j.Data); err != nil {
		return nil, err
	}
	ids, _, err := data.ReadForget(j.ForgetPath, j.Data.Train)
	if err != nil {
		return nil, err
	}
	forget, _ := data.ForgetRetain(j.Data.Train.Len(), ids)
	mk, scores, err := localize.Localize(ctx, work, j.Data.Train, forget, j.Options)
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.ModelPath, err)
	}
	if j.ScoresPath != "" {
		b, err := localize.ScoresFile(scores, work)
		if err == nil {
			err = outfile.WriteFile(j.ScoresPath, b)
		}
		if err != nil {
			return nil, err
		}
	}
	return mk, nil
}
