package graph

// DefineOpaque defines a value that none of g's lists holds and no node
// produces: a value whose definition the IR does not model, such as an ONNX
// sparse initializer. Decoders use it so that nodes can refer to such values;
// the value keeps its definition in its Ext field.
func (g *Graph) DefineOpaque(name string, t *Type) (*Value, error) {
	return g.define(name, t)
}
