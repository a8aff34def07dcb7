package conditions

import (
	"reflect"
	"testing"
	"time"
)

// TestOverCarriesEveryField: a variant's every condition reaches the lab
// (node_placement once did not, and same-node variants ran across nodes).
func TestOverCarriesEveryField(t *testing.T) {
	typ := reflect.TypeOf(Set{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		var v Set
		fv := reflect.ValueOf(&v).Elem().Field(i)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString("x")
		case reflect.Int, reflect.Int64:
			if f.Type == reflect.TypeOf(time.Duration(0)) {
				fv.SetInt(int64(time.Second))
			} else {
				fv.SetInt(3)
			}
		case reflect.Float64:
			fv.SetFloat(0.5)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, fv.Kind())
		}
		if got := (Set{}).Over(v); got != v {
			t.Errorf("Over drops %s: got %+v", f.Name, got)
		}
	}
}
