package ops

// Op types that other packages match by name: the building blocks of the
// patterns graph recognises (an Identity or Cast in front of a parameter, a
// normalization decomposed into ReduceMean, Sub, Div, Mul and Add, a
// Shape-to-Reshape chain), and the ops whose nodes need handling of their
// own (BatchNormalization's running statistics, Dropout's mask, Constant's
// value). Layers are found by Kind, not by name.
const (
	Add                = "Add"
	BatchNormalization = "BatchNormalization"
	Cast               = "Cast"
	CastLike           = "CastLike"
	Constant           = "Constant"
	Div                = "Div"
	Dropout            = "Dropout"
	Identity           = "Identity"
	MatMul             = "MatMul"
	Mul                = "Mul"
	ReduceMean         = "ReduceMean"
	Reshape            = "Reshape"
	Sub                = "Sub"
	Transpose          = "Transpose"
)
