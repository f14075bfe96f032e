package onnxio

import (
	"hash/maphash"
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio/onnxpb"
)

// What onnxio keeps in the Ext fields of decoded objects. Nodes and
// attributes hold their *onnxpb.NodeProto / *onnxpb.AttributeProto directly;
// the other objects hold one of the structs below, which add what Encode needs
// to tell whether the IR object changed since it was decoded.

// modelExt is graph.Model.Ext.
type modelExt struct {
	pb     *onnxpb.ModelProto
	opsets []graph.OpsetImport // as decoded
	meta   map[string]string   // as decoded
	// source is the absolute path the model was loaded from ("" after Decode)
	// and dataFiles the external data files it read.
	source    string
	dataFiles []string
}

// graphExt is graph.Graph.Ext: the GraphProto and, for each of its value
// lists, which Value every original ValueInfoProto belonged to.
type graphExt struct {
	pb                    *onnxpb.GraphProto
	inputs, outputs, info entryList
}

// entryList pairs the values of one ValueInfoProto list with their protos.
type entryList struct {
	vals []*graph.Value
	pbs  []*onnxpb.ValueInfoProto
}

func (l *entryList) add(v *graph.Value, pb *onnxpb.ValueInfoProto) {
	l.vals = append(l.vals, v)
	l.pbs = append(l.pbs, pb)
}

// picker hands out the original protos of a list, each at most once, to the
// values that own them.
func (l *entryList) picker() func(*graph.Value) *onnxpb.ValueInfoProto {
	q := make(map[*graph.Value][]int, len(l.vals))
	for i, v := range l.vals {
		q[v] = append(q[v], i)
	}
	return func(v *graph.Value) *onnxpb.ValueInfoProto {
		idx := q[v]
		if len(idx) == 0 {
			return nil
		}
		q[v] = idx[1:]
		return l.pbs[idx[0]]
	}
}

// valueExt is graph.Value.Ext: the first ValueInfoProto that described the
// value and the type and doc string as decoded.
type valueExt struct {
	pb  *onnxpb.ValueInfoProto
	typ *graph.Type
	doc string
}

// tensorExt is graph.Tensor.Ext: the TensorProto and a fingerprint of the
// data decoded from it, so that Encode can write an unchanged tensor in its
// original encoding (typed fields stay typed fields).
type tensorExt struct {
	pb       *onnxpb.TensorProto
	dtype    graph.DType
	fp       fingerprint
	external bool // the data came from an external file
}

// fingerprint identifies tensor data cheaply: its length and a hash.
type fingerprint struct {
	n   int
	sum uint64
}

var fpSeed = maphash.MakeSeed()

func fingerprintOf(t *graph.Tensor) fingerprint {
	if t.DType == graph.String {
		var h maphash.Hash
		h.SetSeed(fpSeed)
		var lb [8]byte
		for _, s := range t.Strings {
			n := uint64(len(s))
			for i := range lb {
				lb[i] = byte(n >> (8 * i))
			}
			h.Write(lb[:])
			h.Write(s)
		}
		return fingerprint{n: len(t.Strings), sum: h.Sum64()}
	}
	return fingerprint{n: len(t.Raw), sum: maphash.Bytes(fpSeed, t.Raw)}
}

// unchanged reports whether t still holds the data decoded from x.
func (x *tensorExt) unchanged(t *graph.Tensor) bool {
	return x != nil && t.DType == x.dtype && fingerprintOf(t) == x.fp
}

// OriginalProto returns the protobuf message an object was decoded from,
// given the object's Ext field (a *onnxpb.ModelProto, GraphProto, NodeProto,
// AttributeProto, ValueInfoProto or TensorProto), or nil for objects built by
// code. The message must not be modified. A tensor's Raw data may share
// memory with the message's raw_data.
func OriginalProto(ext any) proto.Message {
	switch x := ext.(type) {
	case *modelExt:
		return x.pb
	case *graphExt:
		return x.pb
	case *valueExt:
		return x.pb
	case *tensorExt:
		return x.pb
	case *onnxpb.NodeProto:
		return x
	case *onnxpb.AttributeProto:
		return x
	}
	return nil
}

// shallow returns a copy of m that shares every field value (lists, nested
// messages, bytes) with m, unknown fields included. Encode replaces fields of
// such copies and never modifies the shared values, so the original stays
// intact without the cost of a deep proto.Clone of large tensors.
func shallow[T proto.Message](m T) T {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(u)
	}
	return dst.Interface().(T)
}

func cloneType(t *graph.Type) *graph.Type {
	if t == nil {
		return nil
	}
	c := &graph.Type{DType: t.DType}
	if t.Shape != nil {
		c.Shape = append(make([]graph.Dim, 0, len(t.Shape)), t.Shape...)
	}
	return c
}

func typeEqual(a, b *graph.Type) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.DType != b.DType || (a.Shape == nil) != (b.Shape == nil) || len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return true
}

func float32sEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func sliceEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func bytesListEqual(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}
