package unlearn

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/setting"
)

// Setting describes one setting that an algorithm reads, as the
// algorithm's descriptor (Algorithm.Settings) declares it. The command line
// gives it as a flag and an experiment file's method row under its
// settings key, both spelled from Name; Configure sets it; Record writes it
// into the records that key audits and caches.
type Setting struct {
	// Name is the setting's name in kebab case ("beta", "scrub-alpha"),
	// unique among the registered algorithms' settings.
	Name string
	// Field is the setting's path in Config ("Beta", "SCRUB.Alpha"); empty
	// for a setting of an algorithm registered from outside the package,
	// which Config keeps by Name in Config.Own.
	Field string
	// Default is the value of the setting left unset, and its type: a
	// float64, an int, a bool or a string. A Field's zero value takes it.
	Default any
	// Help is one line for help texts.
	Help string
}

// Values are settings given by name (Recipe.Settings): each an algorithm's
// own setting, as its descriptor declares it, with a value of the
// setting's type or text that parses as one (the command line's).
type Values map[string]any

// commonFields are the Config fields every algorithm shares (the recipe,
// the schedules and the proxies), which Record writes whichever algorithm
// runs; the algorithms' own settings come from their descriptors. Seed
// (recorded apart, it varies per run), Runtime, Progress and Own are not
// among them.
var commonFields = []string{"Epochs", "LR", "BatchSize", "Momentum", "WeightDecay", "Dropout", "Augment",
	"GradChannels", "Schedule", "TrainSchedule", "Auto", "Proxies"}

// Record is c's settings as the records that key existing audits
// (settings.json) hold them: the common fields and every registered
// algorithm's settings that live in a Config field, each under its field
// path (a nested path as nested maps), then, under "Own" when there are
// any, the settings Config.Own holds by name (an outside algorithm's, only
// the one that runs). Values are of their settings' types, so that the
// JSON of the map (its keys sorted) is canonical: equal settings give the
// same bytes.
func (c Config) Record() map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(c)
	put := func(path string) {
		f, err := fieldAt(v, path)
		if err != nil {
			panic(err) // Register checks every path: a built-in table's mistake
		}
		m := out
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			if m[p] == nil {
				m[p] = map[string]any{}
			}
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = f.Interface()
	}
	for _, path := range commonFields {
		put(path)
	}
	for _, s := range AlgorithmSettings() {
		if s.Field != "" {
			put(s.Field)
		}
	}
	if len(c.Own) > 0 {
		own := map[string]any{}
		for name, val := range c.Own {
			if s, ok := lookupSetting(name); ok {
				val, _ = s.parse(val)
			}
			own[name] = val
		}
		out["Own"] = own
	}
	return out
}

// AlgorithmSettings returns the settings of every registered algorithm, in
// the algorithms' order (Algorithms) and each descriptor's.
func AlgorithmSettings() []Setting {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []Setting
	for _, name := range order {
		out = append(out, registry[name].Settings...)
	}
	return out
}

// lookupSetting returns the registered setting called name.
func lookupSetting(name string) (Setting, bool) {
	for _, s := range AlgorithmSettings() {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// Canonical returns vals with each name in kebab case (an experiment file
// may spell it with underscores) and each value of its setting's type, so
// that equal settings encode to equal bytes in cache keys. A name that no
// registered algorithm declares, or a value that does not parse, is an
// error naming the setting.
func Canonical(vals Values) (Values, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := Values{}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		kebab := strings.ReplaceAll(name, "_", "-")
		s, ok := lookupSetting(kebab)
		if !ok {
			return nil, setting.Errorf(kebab, ": no registered algorithm reads such a setting")
		}
		if _, dup := out[kebab]; dup {
			return nil, setting.Errorf(kebab, ": given twice")
		}
		v, err := s.parse(vals[name])
		if err != nil {
			return nil, setting.Errorf(kebab, " %v: %v", vals[name], err)
		}
		out[kebab] = v
	}
	return out, nil
}

// apply sets the settings given by name in vals on c: each must be one of
// algorithm a's own (its descriptor's), with a value of its type. A
// setting that lives in a Config field and has a non-zero default cannot
// be given zero, since the field's zero takes the default.
func (c *Config) apply(a *Algorithm, vals Values) error {
	vals, err := Canonical(vals)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		i := slices.IndexFunc(a.Settings, func(s Setting) bool { return s.Name == name })
		if i < 0 {
			return setting.Errorf(name, ": %s does not read it (%s)", a.Name, settingNames(a))
		}
		s, v := a.Settings[i], vals[name]
		if s.Field == "" {
			c.Own = maps.Clone(c.Own)
			if c.Own == nil {
				c.Own = Values{}
			}
			c.Own[name] = v
			continue
		}
		f, _ := fieldAt(reflect.ValueOf(c).Elem(), s.Field)
		if reflect.ValueOf(v).IsZero() && !reflect.ValueOf(s.Default).IsZero() {
			return setting.Errorf(name, " %v: must be non-zero (left unset, it is %v)", v, s.Default)
		}
		f.Set(reflect.ValueOf(v))
	}
	return nil
}

// settingNames lists a's own settings for messages.
func settingNames(a *Algorithm) string {
	if len(a.Settings) == 0 {
		return "it has no settings of its own"
	}
	var names []string
	for _, s := range a.Settings {
		names = append(names, s.Name)
	}
	return "its settings: " + strings.Join(names, ", ")
}

// fillOwn sets each of a's settings to its default where c leaves it
// unset: a field's zero value, or a name missing from Own. Own is copied
// before it is written, so that a caller's map never changes.
func (c *Config) fillOwn(a *Algorithm, fields bool) {
	for _, s := range a.Settings {
		switch {
		case s.Field != "" && fields:
			if f, _ := fieldAt(reflect.ValueOf(c).Elem(), s.Field); f.IsZero() {
				f.Set(reflect.ValueOf(s.Default))
			}
		case s.Field == "" && !fields:
			if _, ok := c.Own[s.Name]; !ok {
				c.Own = maps.Clone(c.Own)
				if c.Own == nil {
					c.Own = Values{}
				}
				c.Own[s.Name] = s.Default
			}
		}
	}
}

// checkOwn refuses a setting in c.Own that a does not declare, or one of
// the wrong type.
func (c Config) checkOwn(a *Algorithm) error {
	for _, name := range slices.Sorted(maps.Keys(c.Own)) {
		i := slices.IndexFunc(a.Settings, func(s Setting) bool { return s.Name == name && s.Field == "" })
		if i < 0 {
			return fmt.Errorf("%w: setting %q: %s does not read it (%s)", ErrInput, name, a.Name, settingNames(a))
		}
		if _, err := a.Settings[i].parse(c.Own[name]); err != nil {
			return fmt.Errorf("%w: setting %q %v: %v", ErrInput, name, c.Own[name], err)
		}
	}
	return nil
}

// SettingOf returns the value of the setting called name in c: its field's
// for a built-in algorithm's setting, Own's for an outside one's (the
// default when unset), as T, the setting's type. It is how an algorithm
// registered from outside reads its own settings; a name that is not
// registered, or a T other than the setting's type, gives T's zero value.
func SettingOf[T any](c Config, name string) T {
	var zero T
	s, ok := lookupSetting(name)
	if !ok {
		return zero
	}
	v := s.Default
	if s.Field != "" {
		f, err := fieldAt(reflect.ValueOf(c), s.Field)
		if err != nil {
			return zero
		}
		v = f.Interface()
	} else if own, ok := c.Own[name]; ok {
		if p, err := s.parse(own); err == nil {
			v = p
		}
	}
	t, _ := v.(T)
	return t
}

// parse returns v as a value of s's type: a value of that type, an int
// for a float64 setting, an integral float64 for an int one, or text that
// parses as one. A float64 must be finite.
func (s Setting) parse(v any) (any, error) {
	switch s.Default.(type) {
	case float64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int:
			f = float64(x)
		case string:
			p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, fmt.Errorf("not a number")
			}
			f = p
		default:
			return nil, fmt.Errorf("not a number")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("must be a finite number")
		}
		return f, nil
	case int:
		switch x := v.(type) {
		case int:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int(x), nil
			}
		case string:
			if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("not a whole number")
	case bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
		return nil, fmt.Errorf("not true or false")
	case string:
		if x, ok := v.(string); ok {
			return x, nil
		}
		return nil, fmt.Errorf("not text")
	}
	return nil, fmt.Errorf("setting %s has a default of type %T; want float64, int, bool or string", s.Name, s.Default)
}

// check refuses a descriptor's setting that cannot work: a name that is not
// kebab case, a default of another type than float64, int, bool or string,
// or a field path that is not a Config field of the default's type.
func (s Setting) check() error {
	if s.Name == "" || strings.Trim(s.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
		s.Name[0] == '-' || strings.HasSuffix(s.Name, "-") {
		return fmt.Errorf("setting %q: a name is lower-case words joined by hyphens", s.Name)
	}
	if _, err := s.parse(s.Default); err != nil {
		return err
	}
	if s.Field == "" {
		return nil
	}
	f, err := fieldAt(reflect.ValueOf(Config{}), s.Field)
	if err != nil {
		return fmt.Errorf("setting %s: %w", s.Name, err)
	}
	if f.Type() != reflect.TypeOf(s.Default) {
		return fmt.Errorf("setting %s: field %s is a %s, the default a %T", s.Name, s.Field, f.Type(), s.Default)
	}
	return nil
}

// fieldAt is the field of struct v at a dotted path of exported fields.
func fieldAt(v reflect.Value, path string) (reflect.Value, error) {
	for _, p := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("config field %s: %s is not in a struct", path, p)
		}
		sf, ok := v.Type().FieldByName(p)
		if !ok || !sf.IsExported() || len(sf.Index) != 1 {
			return reflect.Value{}, fmt.Errorf("config field %s: no field %s", path, p)
		}
		v = v.Field(sf.Index[0])
	}
	return v, nil
}

// Var is the setting called name of *vals as a flag.Value: Set parses its
// text by the setting's type into *vals, and IsBoolFlag lets a bool
// setting be given without a value. It is how a command line gives an
// algorithm's own settings.
func (vals *Values) Var(s Setting) *SettingVar { return &SettingVar{vals: vals, s: s} }

// SettingVar is Values.Var's flag.Value.
type SettingVar struct {
	vals *Values
	s    Setting
}

// Set parses text as the setting's value and records it.
func (v *SettingVar) Set(text string) error {
	p, err := v.s.parse(text)
	if err != nil {
		return err
	}
	if *v.vals == nil {
		*v.vals = Values{}
	}
	(*v.vals)[v.s.Name] = p
	return nil
}

// String is the value given, or the default.
func (v *SettingVar) String() string {
	if v == nil || v.vals == nil {
		return ""
	}
	if x, ok := (*v.vals)[v.s.Name]; ok {
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v.s.Default)
}

// IsBoolFlag is true for a bool setting.
func (v *SettingVar) IsBoolFlag() bool {
	_, ok := v.s.Default.(bool)
	return ok
}
