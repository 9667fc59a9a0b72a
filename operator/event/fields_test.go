package event

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// carriers names, for each payload of Event, an event type that carries it. A new payload
// needs its row here.
var carriers = map[reflect.Type]Type{
	reflect.TypeFor[ObjectChange]():   Applied,
	reflect.TypeFor[PlanDetail]():     Plan,
	reflect.TypeFor[NodeBatch]():      NodeBatchStarted,
	reflect.TypeFor[LockChange]():     Lock,
	reflect.TypeFor[RunEnd]():         Done,
	reflect.TypeFor[BatchEnd]():       Batch,
	reflect.TypeFor[LinkChange]():     Link,
	reflect.TypeFor[TagChange]():      RevisionTag,
	reflect.TypeFor[KeptChange]():     Kept,
	reflect.TypeFor[RestoreDetail]():  RestorePlan,
	reflect.TypeFor[RestoredChange](): Restored,
	reflect.TypeFor[SkipChange]():     Skipped,
	reflect.TypeFor[WatchStall]():     WatchStalled,
}

// TestEveryFieldRoundTrips sets each field of Event and of its payloads, one at a time, to
// a value that is not zero (every field of the structs it holds too), writes the event to
// the wire and reads it back: a field the wire form misses comes back zero and fails.
func TestEveryFieldRoundTrips(t *testing.T) {
	et := reflect.TypeFor[Event]()
	fields := 0
	for i := range et.NumField() {
		f := et.Field(i)
		if f.Anonymous {
			typ, ok := carriers[f.Type]
			if !ok {
				t.Errorf("payload %s has no carrier event type in this test", f.Name)
				continue
			}
			for j := range f.Type.NumField() {
				fields++
				roundTrip(t, typ, []int{i, j}, f.Type.Field(j).Name)
			}
			continue
		}
		if f.Name == "Type" {
			continue
		}
		fields++
		typ := Warning // the header rides on any event; dry-run is worded on a few
		if f.Name == "DryRun" {
			typ = Plan
		}
		roundTrip(t, typ, []int{i}, f.Name)
	}
	if fields < 27 {
		t.Errorf("checked %d fields, want at least 27", fields)
	}
}

func roundTrip(t *testing.T, typ Type, index []int, name string) {
	t.Helper()
	e := base(typ)
	v := reflect.ValueOf(&e).Elem().FieldByIndex(index)
	fill(v)
	b, err := json.Marshal(e)
	if err != nil {
		t.Errorf("%s on %s: %v", name, typ, err)
		return
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Errorf("%s on %s: %v", name, typ, err)
		return
	}
	if !reflect.DeepEqual(back, e) {
		t.Errorf("%s on %s does not survive the wire:\nwire %s\n got %+v\nwant %+v", name, typ, b, back, e)
	}
}

// base is an event of type typ that round-trips as it is: a done's result derives from
// its error, so it is set to what the wire will say.
func base(typ Type) Event {
	e := Event{Type: typ}
	if typ == Done {
		e.Result = RunSucceeded
	}
	return e
}

// fill sets v, and everything it holds, to a value that is not zero; the closed sets take
// a member that the wire words back (a done's result follows its error, so it stays).
func fill(v reflect.Value) {
	switch x := v.Addr().Interface().(type) {
	case *time.Time:
		*x = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		return
	case *Action:
		*x = ActionConfigured
		return
	case *LockState:
		*x = LockTakenOver
		return
	case *Operation:
		*x = OperationUpgrade
		return
	case *RunResult:
		*x = RunSucceeded
		return
	case *LinkOutcome:
		*x = LinkRotated
		return
	case *ClusterOutcome:
		*x = ClusterInstalled
		return
	case *TagOutcome:
		*x = TagMoved
		return
	case *KeptReason:
		*x = KeptRecreated
		return
	case *RestoreOutcome:
		*x = RestoreRecreated
		return
	case *SkipReason:
		*x = SkipLabelChanged
		return
	case *Type:
		*x = Warning
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + v.Type().Name())
	case reflect.Int:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	default:
		panic("fill: no value for " + v.Type().String())
	}
}
