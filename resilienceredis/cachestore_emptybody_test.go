package resilienceredis

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/google/go-cmp/cmp"
)

// rawCodec writes a string as its bytes: "" is no bytes at all.
type rawCodec struct{}

func (rawCodec) Marshal(v string) ([]byte, error)   { return []byte(v), nil }
func (rawCodec) Unmarshal(b []byte) (string, error) { return string(b), nil }

// An entry whose stored body is empty (a negative entry of an error whose
// text is "", a value the codec writes as no bytes) is read back like any
// other: the envelope alone is a whole entry.
func TestCacheStoreEmptyBody(t *testing.T) {
	ctx := ctxFor(t)
	s := NewCacheStore[string](newClient(t), "raw", rawCodec{}, WithCachePrefix(testPrefix(t)),
		WithCacheTimeout(10*time.Second))
	now := time.Now()
	val := cache.Entry[string]{Value: "", Expires: now.Add(time.Minute), Discard: now.Add(2 * time.Minute), Size: 3}
	s.Set(ctx, "value", val)
	got, ok := s.Get(ctx, "value")
	if !ok {
		t.Fatal("Get of a value of no bytes: miss")
	}
	if diff := cmp.Diff(val, got, cmpEntry); diff != "" {
		t.Errorf("entry mismatch (-want +got):\n%s", diff)
	}
	neg := cache.Entry[string]{Err: errors.New(""), Expires: now.Add(time.Minute), Discard: now.Add(time.Minute)}
	s.Set(ctx, "error", neg)
	got, ok = s.Get(ctx, "error")
	if !ok {
		t.Fatal("Get of a negative entry of an empty error text: miss")
	}
	var se *StoredError
	if !errors.As(got.Err, &se) || se.Msg != "" {
		t.Errorf("Get: Err = %#v, want a *StoredError with the text \"\"", got.Err)
	}
}
