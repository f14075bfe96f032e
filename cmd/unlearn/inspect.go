package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// inspectReport is the JSON form of `unlearn inspect` (schema
// unlearn.inspect/v1, documented in README.md).
type inspectReport struct {
	Schema      string           `json:"schema"`
	Model       inspectModel     `json:"model"`
	Inputs      []inspectIO      `json:"inputs"`
	Outputs     []inspectIO      `json:"outputs"`
	Ops         map[string]int   `json:"ops"`
	Parameters  inspectParams    `json:"parameters"`
	Layers      []inspectLayer   `json:"layers"`
	Classifier  string           `json:"classifier"`
	Unsupported []inspectNodeRef `json:"unsupported"`
	Untied      int              `json:"untied"`
}

type inspectModel struct {
	Path        string           `json:"path"`
	SHA256      string           `json:"sha256"`
	IRVersion   int64            `json:"ir_version"`
	Opsets      map[string]int64 `json:"opsets"`
	Producer    string           `json:"producer,omitempty"`
	Nodes       int              `json:"nodes"`
	BatchNorm   int              `json:"batchnorm"`
	BNPreserved bool             `json:"batchnorm_preserved"`
}

type inspectIO struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"` // ints, or strings for symbolic dims, or null for unknown
}

type inspectParams struct {
	Tensors  int   `json:"tensors"`
	Elements int64 `json:"elements"`
	Neurons  int   `json:"neurons"`
	Layers   int   `json:"layers"`
	MaxDepth int   `json:"max_depth"`
}

type inspectLayer struct {
	Name       string          `json:"name"`
	Op         string          `json:"op"`
	Node       string          `json:"node"`
	Depth      int             `json:"depth"`
	Channels   int             `json:"channels"`
	Params     int64           `json:"params"`
	Standalone bool            `json:"standalone,omitempty"`
	Members    []inspectMember `json:"members"`
}

type inspectMember struct {
	Name  string  `json:"name"` // the initializer name: the state_dict key when the export kept it
	Role  string  `json:"role"`
	Shape []int64 `json:"shape"`
	Axis  int     `json:"axis"`
	Node  string  `json:"node"`
}

type inspectNodeRef struct {
	Op     string `json:"op"`
	Domain string `json:"domain,omitempty"`
	Node   string `json:"node"`
}

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "summarize a model: opset, inputs and outputs, ops, parameters, neurons per layer, classifier, unsupported ops",
		ArgsUsage: " ",
		Description: "inspect reads the model only (ONNX Runtime is not needed). Layers are the groups of parameters\n" +
			"that share output channels (a Conv/Gemm/MatMul weight with its bias and a directly following\n" +
			"BatchNormalization or LayerNormalization); each channel is one neuron for the localization strategies.\n" +
			"Member names are the model's initializer names, which are PyTorch's state_dict keys when the model\n" +
			"was exported with its BatchNormalization kept (TrainingMode.TRAINING, do_constant_folding=False).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "ONNX classifier"},
			&cli.StringFlag{Name: "json", Usage: "also write the summary as JSON to `FILE` (- for stdout, instead of the table)"},
			&cli.StringFlag{Name: "classifier", Usage: "name of the classifier layer (weight initializer or node name) when the default (the layer that produces the logits) is wrong"},
			&cli.BoolFlag{Name: "channels", Usage: "list every layer (default: at most 60 rows, the rest summarized)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unexpected arguments %v", c.Args().Slice())
			}
			if err := checkOutputs(c, "json"); err != nil {
				return err
			}
			path := c.String("model")
			rep, err := inspectModelFile(path, c.String("classifier"))
			if err != nil {
				return err
			}
			if p := c.String("json"); p != "" {
				if err := writeJSON(c, p, rep); err != nil {
					return err
				}
				if p == "-" {
					return nil
				}
			}
			printInspect(c.App.Writer, rep, c.Bool("channels"))
			return nil
		},
	}
}

func inspectModelFile(path, classifier string) (*inspectReport, error) {
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, err
	}
	sum, err := eval.HashPath(path)
	if err != nil {
		return nil, err
	}
	g := m.Graph
	rep := &inspectReport{
		Schema: "unlearn.inspect/v1",
		Model: inspectModel{
			Path: path, SHA256: sum, IRVersion: m.IRVersion,
			Opsets: map[string]int64{}, Producer: strings.TrimSpace(m.ProducerName + " " + m.ProducerVersion),
		},
		Ops:         map[string]int{},
		Unsupported: []inspectNodeRef{},
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		rep.Model.Opsets[d] = o.Version
	}
	for _, n := range g.Nodes() {
		rep.Ops[n.OpType]++
		rep.Model.Nodes++
		if n.OpType == "BatchNormalization" {
			rep.Model.BatchNorm++
		}
	}
	rep.Model.BNPreserved = rep.Model.BatchNorm > 0
	for _, v := range g.Inputs {
		if !v.IsInitializer() {
			rep.Inputs = append(rep.Inputs, ioOfValue(v))
		}
	}
	for _, v := range g.Outputs {
		rep.Outputs = append(rep.Outputs, ioOfValue(v))
	}
	// The tool trains on an untied copy; report what untying would do.
	untied, err := graph.UntieIdentityInitializers(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Untied = untied
	nm, err := graph.Neurons(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	bad, err := autodiff.UnsupportedNodes(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, n := range bad {
		rep.Unsupported = append(rep.Unsupported, inspectNodeRef{Op: n.OpType, Domain: n.Domain, Node: n.Name})
	}
	if len(nm.Params) == 0 && len(bad) == 0 {
		return nil, fmt.Errorf("%s: the model has no trainable parameters (no float initializer feeds a differentiable input); there is nothing to unlearn", path)
	}
	rep.Parameters = inspectParams{Tensors: len(nm.Params), Elements: nm.NumParams, Neurons: len(nm.Neurons), Layers: len(nm.Layers), MaxDepth: nm.MaxDepth}
	for _, l := range nm.Layers {
		il := inspectLayer{Name: l.Name, Depth: l.Depth, Channels: l.Channels, Params: l.NumParams(), Standalone: l.Standalone}
		if l.Op != nil {
			il.Op, il.Node = l.Op.OpType, l.Op.Name
		}
		for _, mb := range l.Members {
			im := inspectMember{Name: mb.Param.Name, Role: mb.Role, Axis: mb.Axis}
			if mb.Param.Init != nil {
				im.Shape = append([]int64{}, mb.Param.Init.Shape...)
			}
			if mb.Node != nil {
				im.Node = mb.Node.Name
			}
			il.Members = append(il.Members, im)
		}
		rep.Layers = append(rep.Layers, il)
	}
	if cl, err := nm.Classifier(classifier); err != nil {
		if classifier != "" {
			return nil, usagef("--classifier %q: %v", classifier, err)
		}
		rep.Classifier = ""
	} else {
		rep.Classifier = cl.Name
	}
	return rep, nil
}

func ioOfValue(v *graph.Value) inspectIO {
	io := inspectIO{Name: v.Name}
	if v.Type == nil {
		io.DType = "unknown"
		return io
	}
	io.DType = strings.ToLower(v.Type.DType.String())
	if v.Type.Shape != nil {
		io.Shape = []any{}
		for _, d := range v.Type.Shape {
			switch {
			case d.Known():
				io.Shape = append(io.Shape, d.Size)
			case d.Param != "":
				io.Shape = append(io.Shape, d.Param)
			default:
				io.Shape = append(io.Shape, nil)
			}
		}
	}
	return io
}

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

func printInspect(w io.Writer, r *inspectReport, all bool) {
	var opsets []string
	for d, v := range r.Model.Opsets {
		opsets = append(opsets, fmt.Sprintf("%s %d", d, v))
	}
	sort.Strings(opsets)
	fmt.Fprintf(w, "model     %s (sha256 %s)\n", r.Model.Path, r.Model.SHA256[:16])
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
	bn := "none (fused into the convolutions, or never present)"
	if r.Model.BatchNorm > 0 {
		bn = fmt.Sprintf("%d nodes kept: finetuning updates their running statistics", r.Model.BatchNorm)
	}
	fmt.Fprintf(w, "batchnorm %s\n", bn)
	p := r.Parameters
	fmt.Fprintf(w, "params    %d elements in %d tensors; %d neurons in %d layers (max depth %d)\n",
		p.Elements, p.Tensors, p.Neurons, p.Layers, p.MaxDepth)
	if r.Untied > 0 {
		fmt.Fprintf(w, "untied    %d parameters the exporter shared behind Identity nodes (each becomes its own again)\n", r.Untied)
	}
	cl := r.Classifier
	if cl == "" {
		cl = "not found (pass --classifier to name it)"
	}
	fmt.Fprintf(w, "classifier %s\n", cl)
	if len(r.Unsupported) == 0 {
		fmt.Fprintf(w, "gradients every op on the path from the parameters to the logits has a gradient rule\n")
	} else {
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "layer\top\tdepth\tneurons\tparams\tmembers (initializer [shape] role axis)\n")
	limit := len(r.Layers)
	if !all && limit > 60 {
		limit = 60
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
		fmt.Fprintf(w, "... %d more layers (--channels lists all, --json writes all)\n", len(r.Layers)-limit)
	}
}
