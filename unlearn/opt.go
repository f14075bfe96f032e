package unlearn

// Opt is an optional setting: V when Set, else unset, which the library
// fills with its default. It replaces "0 means the default" conventions,
// so that a caller can give any value, 0 included, and the library can
// tell a value given from one left out.
type Opt[T any] struct {
	V   T
	Set bool
}

// Some returns the Opt that gives v.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, Set: true} }

// Or is o's value when set, else def.
func (o Opt[T]) Or(def T) T {
	if o.Set {
		return o.V
	}
	return def
}

// Ptr is o as a pointer: nil when unset.
func (o Opt[T]) Ptr() *T {
	if !o.Set {
		return nil
	}
	v := o.V
	return &v
}

// NonZero returns the Opt that gives v unless v is T's zero value: how a
// setting whose zero value stands for its default (an experiment file's
// key left out) becomes an Opt.
func NonZero[T comparable](v T) Opt[T] {
	var zero T
	return Opt[T]{V: v, Set: v != zero}
}
