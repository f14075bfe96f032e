package graph

import (
	"strings"
	"testing"
)

func mustNode(t *testing.T, g *Graph, op string, ins []*Value, outs ...string) *Node {
	t.Helper()
	n, err := g.AddNode(op, "", op+"_"+strings.Join(outs, "_"), ins, outs)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// chain builds x → Relu(a) → Neg(b) → output b, with an initializer w.
func chain(t *testing.T) (*Graph, *Value, *Node, *Node) {
	t.Helper()
	g := NewGraph("g")
	x, err := g.AddInput("x", &Type{DType: Float, Shape: DimsOf([]int64{2})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddInitializer(NewFloat32("w", []int64{2}, []float32{1, 2})); err != nil {
		t.Fatal(err)
	}
	r := mustNode(t, g, "Relu", []*Value{x}, "a")
	n := mustNode(t, g, "Add", []*Value{r.Output(0), g.Value("w")}, "b")
	g.Outputs = []*Value{n.Output(0)}
	if err := g.Validate(); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
	return g, x, r, n
}

func TestValidateStaleUses(t *testing.T) {
	g, x, r, _ := chain(t)
	// A use recorded for a node input that points elsewhere.
	x.uses = append(x.uses, Use{Node: r, Index: 3})
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("extra use: %v", err)
	}
	x.uses = x.uses[:1]
	// A missing use.
	saved := x.uses
	x.uses = nil
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("missing use: %v", err)
	}
	x.uses = saved
	// A use by a node that is no longer in the graph.
	ghost := &Node{OpType: "Neg", graph: g, inputs: []*Value{x}}
	x.uses = append(x.uses, Use{Node: ghost, Index: 0})
	if err := g.Validate(); err == nil {
		t.Errorf("use by a removed node accepted")
	}
	x.uses = saved
	if err := g.Validate(); err != nil {
		t.Errorf("restored graph: %v", err)
	}
}

func TestValidateUndefinedAndDuplicate(t *testing.T) {
	g, _, _, n := chain(t)
	other := NewGraph("other")
	foreign, _ := other.AddInput("foreign", nil)
	n.SetInput(1, foreign)
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "not defined") {
		t.Errorf("foreign value: %v", err)
	}
	if _, err := g.AddInput("x", nil); err == nil {
		t.Errorf("duplicate input accepted")
	}
	if _, err := g.AddNode("Relu", "", "dup", []*Value{g.Value("x")}, []string{"a"}); err == nil {
		t.Errorf("duplicate output name accepted")
	} else if g.Value("x").uses[len(g.Value("x").uses)-1].Node.Name == "dup" {
		t.Errorf("failed AddNode left a use behind")
	}
	g2, _, _, _ := chain(t)
	g2.Outputs = append(g2.Outputs, &Value{Name: "nowhere"})
	if err := g2.Validate(); err == nil {
		t.Errorf("undefined graph output accepted")
	}
	g3, _, _, _ := chain(t)
	g3.Initializers[0].Init.Raw = g3.Initializers[0].Init.Raw[:4]
	if err := g3.Validate(); err == nil {
		t.Errorf("short initializer data accepted")
	}
}

func TestValidateCycle(t *testing.T) {
	g, x, r, n := chain(t)
	// a = Relu(b), b = Add(a, w): a cycle.
	r.SetInput(0, n.Output(0))
	err := g.Validate()
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle: %v", err)
	}
	if !strings.Contains(err.Error(), "Relu") || !strings.Contains(err.Error(), "Add") {
		t.Errorf("cycle error does not name the nodes on it: %v", err)
	}
	if _, err := g.Topo(); err == nil {
		t.Errorf("Topo accepted a cycle")
	}
	r.SetInput(0, x)
	if err := g.Validate(); err != nil {
		t.Errorf("after breaking the cycle: %v", err)
	}
}

func TestValidateCycleNamesCycleNotDownstream(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.AddInput("x", nil)
	a := mustNode(t, g, "Relu", []*Value{x}, "a")
	b := mustNode(t, g, "Neg", []*Value{a.Output(0)}, "b")
	mustNode(t, g, "Exp", []*Value{b.Output(0)}, "c") // downstream of the cycle
	a.SetInput(0, b.Output(0))
	_, err := g.Topo()
	if err == nil || strings.Contains(err.Error(), "Exp") {
		t.Errorf("cycle error %v should name Relu and Neg only", err)
	}
}

func TestTopoStableOrder(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.AddInput("x", nil)
	if _, err := g.AddInitializer(NewFloat32("k", nil, []float32{1})); err != nil {
		t.Fatal(err)
	}
	a := mustNode(t, g, "Relu", []*Value{x}, "a")
	p := mustNode(t, g, "Sigmoid", []*Value{x}, "p") // independent, stored second
	b := mustNode(t, g, "Neg", []*Value{x}, "b")
	// Make a depend on b after the fact: stored order a, p, b.
	a.SetInput(0, b.Output(0))
	order, err := g.Topo()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range order {
		got = append(got, n.OpType)
	}
	if strings.Join(got, ",") != "Sigmoid,Neg,Relu" {
		t.Errorf("Topo = %v, want Sigmoid,Neg,Relu (ready nodes in stored order)", got)
	}
	if err := g.SortTopologically(); err != nil || g.Nodes()[0] != p || g.Nodes()[2] != a {
		t.Errorf("SortTopologically: %v", err)
	}
}

// ifWithBranch makes an If node in g whose then-branch outputs the outer
// value outer directly, and whose else-branch defines inner = Neg(outer).
func ifWithBranch(t *testing.T, g *Graph, cond, outer *Value) (*Node, *Graph, *Graph) {
	t.Helper()
	then := NewGraph("then")
	then.Parent = g
	then.Outputs = []*Value{outer}
	els := NewGraph("else")
	els.Parent = g
	neg, err := els.AddNode("Neg", "", "inner_neg", []*Value{outer}, []string{"inner"})
	if err != nil {
		t.Fatal(err)
	}
	els.Outputs = []*Value{neg.Output(0)}
	n, err := g.AddNode("If", "", "if", []*Value{cond}, []string{"res"},
		&Attribute{Name: "then_branch", Type: AttrGraph, G: then},
		&Attribute{Name: "else_branch", Type: AttrGraph, G: els})
	if err != nil {
		t.Fatal(err)
	}
	return n, then, els
}

// A subgraph output that is an outer value is a dependency too.
func TestTopoSubgraphOutputDependency(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.AddInput("x", nil)
	cond, _ := g.AddInput("cond", &Type{DType: Bool})
	// Store the If before the producer of the value its branches use.
	then := NewGraph("then")
	then.Parent = g
	ifn, err := g.AddNode("If", "", "if", []*Value{cond}, []string{"res"},
		&Attribute{Name: "then_branch", Type: AttrGraph, G: then},
		&Attribute{Name: "else_branch", Type: AttrGraph, G: then})
	if err != nil {
		t.Fatal(err)
	}
	p := mustNode(t, g, "Relu", []*Value{x}, "y")
	then.Outputs = []*Value{p.Output(0)}
	g.Outputs = []*Value{ifn.Output(0)}
	order, err := g.Topo()
	if err != nil {
		t.Fatalf("Topo: %v", err)
	}
	if order[0] != p || order[1] != ifn {
		t.Errorf("If ordered before the producer of its branch output")
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestFreshNameAcrossNestedGraphs(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.AddInput("x", nil)
	cond, _ := g.AddInput("cond", nil)
	_, _, els := ifWithBranch(t, g, cond, x)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := g.FreshName("inner"); n == "inner" {
		t.Errorf("root FreshName returned %q, defined in a subgraph", n)
	}
	if n := els.FreshName("x"); n == "x" {
		t.Errorf("subgraph FreshName returned %q, defined in the root", n)
	}
	if n := g.FreshName("if"); n == "if" {
		t.Errorf("FreshName returned the node name %q", n)
	}
	if n := g.FreshName("inner_neg"); n == "inner_neg" {
		t.Errorf("FreshName returned the subgraph node name %q", n)
	}
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		for _, s := range []*Graph{g, els} {
			n := s.FreshName("t")
			if seen[n] {
				t.Fatalf("FreshName repeated %q", n)
			}
			seen[n] = true
		}
	}
	if n := g.FreshName(""); n == "" {
		t.Errorf("empty base gave an empty name")
	}
	// A subgraph that redefines an outer name is invalid.
	if _, err := els.AddNode("Neg", "", "shadow", []*Value{x}, []string{"cond"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "redefines") {
		t.Errorf("shadowing accepted: %v", err)
	}
}

func TestReplaceAllUsesWith(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.AddInput("x", nil)
	cond, _ := g.AddInput("cond", nil)
	a := mustNode(t, g, "Relu", []*Value{x}, "a")
	c := mustNode(t, g, "Mul", []*Value{a.Output(0), a.Output(0)}, "c")
	ifn, then, els := ifWithBranch(t, g, cond, a.Output(0))
	g.Outputs = []*Value{a.Output(0), c.Output(0), ifn.Output(0)}
	b := mustNode(t, g, "Neg", []*Value{x}, "b")
	g.ReplaceAllUsesWith(a.Output(0), b.Output(0))
	if len(a.Output(0).Uses()) != 0 {
		t.Errorf("old value keeps %d uses", len(a.Output(0).Uses()))
	}
	if c.Input(0) != b.Output(0) || c.Input(1) != b.Output(0) {
		t.Errorf("Mul inputs not re-pointed")
	}
	if g.Outputs[0] != b.Output(0) || then.Outputs[0] != b.Output(0) {
		t.Errorf("graph or subgraph output not re-pointed")
	}
	if els.Nodes()[0].Input(0) != b.Output(0) {
		t.Errorf("subgraph node input not re-pointed")
	}
	if len(b.Output(0).Uses()) != 3 {
		t.Errorf("new value has %d uses, want 3", len(b.Output(0).Uses()))
	}
	if err := g.SortTopologically(); err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveNode(a); err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	g.ReplaceAllUsesWith(b.Output(0), b.Output(0)) // no-op
	if len(b.Output(0).Uses()) != 3 {
		t.Errorf("self-replacement changed the uses")
	}
}

func TestRemoveNodeRefusesWhileUsed(t *testing.T) {
	g, x, r, n := chain(t)
	g.ValueInfo = append(g.ValueInfo, r.Output(0))
	if err := g.RemoveNode(r); err == nil {
		t.Errorf("removed a node whose output is used")
	}
	if err := g.RemoveNode(n); err == nil || !strings.Contains(err.Error(), "graph output") {
		t.Errorf("removed a node computing a graph output: %v", err)
	}
	n.SetInput(0, x)
	if err := g.RemoveNode(r); err != nil {
		t.Fatalf("RemoveNode: %v", err)
	}
	if g.Value("a") != nil || len(x.Uses()) != 1 || len(g.ValueInfo) != 0 {
		t.Errorf("RemoveNode left the value, a use or its value info behind")
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	w := g.Value("w")
	if err := g.RemoveInitializer(w); err == nil {
		t.Errorf("removed a used initializer")
	}
	g.Outputs = append(g.Outputs, w)
	n.SetInput(1, x)
	if err := g.RemoveInitializer(w); err == nil {
		t.Errorf("removed an initializer that is a graph output")
	}
	g.Outputs = g.Outputs[:1]
	if err := g.RemoveInitializer(w); err != nil || g.Value("w") != nil || len(g.Initializers) != 0 {
		t.Errorf("RemoveInitializer: %v", err)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
