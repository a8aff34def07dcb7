package conditions

import (
	"reflect"
	"slices"
	"strings"
)

// Keys are the conditions' names as a spec writes them (their YAML keys),
// in the order of Set, the variant's name aside.
func Keys() []string {
	var keys []string
	t := reflect.TypeFor[Set]()
	for i := range t.NumField() {
		k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if k != "name" {
			keys = append(keys, k)
		}
	}
	return keys
}

// SameIn reports whether a and b set the conditions named keys (Keys)
// alike; a name that is no condition is alike in every set.
func SameIn(a, b Set, keys []string) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if slices.Contains(keys, k) && !va.Field(i).Equal(vb.Field(i)) {
			return false
		}
	}
	return true
}
