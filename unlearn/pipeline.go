package unlearn

import (
	"context"
	"fmt"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// Job is one unlearning run on a model file: the algorithm with its
// settings and mask, and where the result goes.
type Job struct {
	// ModelPath is the input model; it is read twice (the original to
	// write back into, and an untied working copy) and never written.
	ModelPath string
	Data      *data.Dataset
	// Forget holds indices into Data.Train; Retain is the rest.
	Forget     []int
	Algorithm  string
	Config     Config
	Mask       map[string][]bool // nil: every parameter
	Classifier string
	// Out is where the unlearned model is written (atomically; never over
	// ModelPath).
	Out string
	// Location names the external data file (beside Out) of a model that
	// needs one; empty: Out's name + ".data".
	Location string
}

// Outcome is what Execute did.
type Outcome struct {
	Result *Result
	Audit  *Audit
	// Note explains a deviation from "same graph, only initializers
	// changed" (untied parameters), or is empty.
	Note    string
	Seconds float64
}

// PrepareModel loads path and returns the original model and an untied
// working copy with the number of parameters untying split apart; it
// refuses a model that is not a classifier (eval.ModelOutput), whose gradient cannot be built (naming every node
// without a rule) or that has no trainable parameters.
func PrepareModel(path string) (orig, work *graph.Model, untied int, err error) {
	orig, err = onnxio.Load(path)
	if err != nil {
		return nil, nil, 0, err
	}
	work, err = onnxio.Load(path)
	if err != nil {
		return nil, nil, 0, err
	}
	if _, err := eval.ModelOutput(work); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	untied, err = graph.UntieIdentityInitializers(work.Graph)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := autodiff.CheckSupported(work); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	nm, err := graph.Neurons(work.Graph)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(nm.Params) == 0 {
		return nil, nil, 0, fmt.Errorf("%s: the model has no trainable parameters (no float initializer feeds a differentiable input); there is nothing to unlearn", path)
	}
	return orig, work, untied, nil
}

// Execute runs the job's algorithm on an untied working copy of the model,
// writes the result back into the original graph (inference form), audits
// every initializer against the input, and saves the model atomically. On
// any error, including cancellation, nothing is written.
func Execute(ctx context.Context, job Job) (*Outcome, error) {
	start := time.Now()
	orig, work, untied, err := PrepareModel(job.ModelPath)
	if err != nil {
		return nil, err
	}
	// The audit compares against an untouched copy of the working graph.
	ref, err := onnxio.Load(job.ModelPath)
	if err != nil {
		return nil, err
	}
	if _, err := graph.UntieIdentityInitializers(ref.Graph); err != nil {
		return nil, err
	}
	nm, err := graph.Neurons(ref.Graph)
	if err != nil {
		return nil, err
	}
	_, retain := data.ForgetRetain(job.Data.Train.Len(), job.Forget)
	res, err := Run(ctx, job.Algorithm, Input{
		Model: work, Data: job.Data, Forget: job.Forget, Retain: retain,
		Mask: job.Mask, Classifier: job.Classifier,
	}, job.Config)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	allowed := Allowed{Elements: job.Mask, Whole: map[string]bool{}, State: true}
	if job.Mask == nil {
		for _, p := range nm.Params {
			allowed.Whole[p.Value.Name] = true
		}
	}
	if job.Algorithm == "rft" {
		cls, err := nm.Classifier(job.Classifier)
		if err != nil {
			return nil, err
		}
		for _, m := range cls.Members {
			allowed.Whole[m.Param.Name] = true
		}
	}
	audit, err := AuditModels(ref.Graph, work.Graph, nm, allowed)
	if err != nil {
		return nil, err
	}
	if !audit.BitIdentical {
		return nil, fmt.Errorf("unlearn: internal error: %s changed parameters outside its mask: %v; nothing was written", job.Algorithm, audit.Violations)
	}
	out, note, err := Finalize(orig, work, untied)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := onnxio.Save(out, job.Out, &onnxio.SaveOptions{Protect: []string{job.ModelPath}, Location: job.Location}); err != nil {
		return nil, err
	}
	return &Outcome{Result: res, Audit: audit, Note: note, Seconds: time.Since(start).Seconds()}, nil
}
