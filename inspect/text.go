package inspect

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
)

// MaxRows is how many layers WriteText lists unless asked for all.
const MaxRows = 60

// lineWidth is where WriteText wraps its paragraphs (in bytes).
const lineWidth = 100

// WriteText writes r as the terminal summary of `unlearn inspect`: the
// model, its format, inputs, outputs, op counts, BatchNormalization,
// parameters, the classifier, the nodes without a gradient rule, then a
// table of the layers (at most MaxRows unless all), naming the settings
// that show more in t's terms (nil: setting.Plain). It returns the first
// error of w.
func WriteText(w io.Writer, r *Report, all bool, t setting.Terms) error {
	if t == nil {
		t = setting.Plain
	}
	ew := &textio.ErrWriter{W: w}
	writeHeader(ew, r, t)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "layer\top\tdepth\tneurons\tparams\tmembers (initializer [shape] role axis)\n")
	limit := len(r.Layers)
	if !all && limit > MaxRows {
		limit = MaxRows
	}
	for _, l := range r.Layers[:limit] {
		var ms []string
		for _, m := range l.Members {
			ms = append(ms, fmt.Sprintf("%s %v %s@%d", m.Name, m.Shape, m.Role, m.Axis))
		}
		op := l.Op
		if l.Standalone {
			op += " (standalone)"
		}
		mark := ""
		if l.Name == r.Classifier {
			mark = "  <- classifier"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s%s\n", l.Name, op, l.Depth, l.Channels, l.Params, strings.Join(ms, "; "), mark)
	}
	tw.Flush()
	if limit < len(r.Layers) {
		fmt.Fprintf(ew, "... %d more layers (%s lists all, %s writes all)\n", len(r.Layers)-limit,
			t.Setting(setting.Of("channels")), t.Setting(setting.Of("json")))
	}
	return ew.Err
}

// writeHeader writes the lines above the layer table.
func writeHeader(w io.Writer, r *Report, t setting.Terms) {
	var opsets []string
	for d, v := range r.Model.Opsets {
		opsets = append(opsets, fmt.Sprintf("%s %d", d, v))
	}
	sort.Strings(opsets)
	fmt.Fprintf(w, "model     %s (sha256 %s)\n", r.Model.Path, shortHash(r.Model.SHA256))
	fmt.Fprintf(w, "format    IR version %d, opset %s", r.Model.IRVersion, strings.Join(opsets, ", "))
	if r.Model.Producer != "" {
		fmt.Fprintf(w, ", produced by %s", r.Model.Producer)
	}
	fmt.Fprintln(w)
	for _, in := range r.Inputs {
		fmt.Fprintf(w, "input     %s %s %s\n", in.Name, in.DType, shapeString(in.Shape))
	}
	for _, o := range r.Outputs {
		fmt.Fprintf(w, "output    %s %s %s\n", o.Name, o.DType, shapeString(o.Shape))
	}
	// Ops by count, most frequent first, ties by name.
	type kv struct {
		k string
		v int
	}
	var ops []kv
	for k, v := range r.Ops {
		ops = append(ops, kv{k, v})
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].v != ops[j].v {
			return ops[i].v > ops[j].v
		}
		return ops[i].k < ops[j].k
	})
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = fmt.Sprintf("%s %d", o.k, o.v)
	}
	fmt.Fprintf(w, "nodes     %d: %s\n", r.Model.Nodes, strings.Join(parts, ", "))
	bn := "none (never present, or folded by an exporter other than PyTorch's)"
	if r.FoldedBatchNorm != "" {
		bn = "none: " + r.FoldedBatchNorm
	}
	if r.Model.BatchNorm > 0 {
		bn = fmt.Sprintf("%d nodes kept: finetuning updates their running statistics", r.Model.BatchNorm)
	}
	// What the export means and what to do is a paragraph: its first line
	// says what, the rest follow under it.
	const indent = "          "
	fmt.Fprintf(w, "%s\n", textio.Wrap("batchnorm "+bn, lineWidth, indent))
	if r.TrainingExport != "" {
		fmt.Fprintf(w, "%s%s\n", indent, textio.Wrap(r.TrainingExport, lineWidth-len(indent), indent))
	}
	fmt.Fprintf(w, "%s\n", textio.Wrap("normalize "+r.Normalization, lineWidth, indent))
	p := r.Parameters
	fmt.Fprintf(w, "params    %d elements in %d tensors; %d neurons in %d layers "+
		"(max depth %d; the default localization resets layers from depth %d on)\n",
		p.Elements, p.Tensors, p.Neurons, p.Layers, p.MaxDepth, p.DefaultMinDepth)
	if r.FixedBatch > 0 {
		fmt.Fprintf(w, "batch     fixed at %d: %s\n", r.FixedBatch, r.BatchNote)
	}
	if r.Untied > 0 {
		fmt.Fprintf(w, "untied    %d parameters the exporter shared behind Identity nodes (each becomes its own again)\n",
			r.Untied)
	}
	cl := r.Classifier
	if cl == "" {
		cl = setting.Msgf("not found (pass %s to name it)", setting.Of("classifier")).Render(t)
	}
	fmt.Fprintf(w, "classifier %s\n", cl)
	switch {
	case len(r.Unsupported) == 0 && r.Untrainable != "":
		fmt.Fprintf(w, "gradients every op on the path from the parameters to the logits has a gradient rule, "+
			"but the training graph cannot be built, so the model cannot be unlearned:\n          %s\n", r.Untrainable)
	case len(r.Unsupported) == 0:
		fmt.Fprintf(w, "gradients every op on the path from the parameters to the logits has a gradient rule\n")
	default:
		fmt.Fprintf(w, "gradients %d node(s) have no gradient rule; the model cannot be unlearned:\n", len(r.Unsupported))
		for _, n := range r.Unsupported {
			d := ""
			if n.Domain != "" {
				d = " (domain " + n.Domain + ")"
			}
			fmt.Fprintf(w, "          %s%s at node %q\n", n.Op, d, n.Node)
		}
	}
	fmt.Fprintln(w)
}

// shortHash is the first 16 hex digits of a SHA-256, enough to tell files
// apart on a terminal (all of it when shorter, as for a Summarize report).
func shortHash(s string) string {
	if len(s) > 16 {
		return s[:16]
	}
	return s
}

// shapeString writes a shape as [1, N, ?]: "?" for an unknown dimension,
// and for an unknown rank.
func shapeString(s []any) string {
	if s == nil {
		return "?"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		if d == nil {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
