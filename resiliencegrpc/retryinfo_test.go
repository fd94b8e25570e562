package resiliencegrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A failure without a pushback trailer takes its pushback from the status's
// google.rpc.RetryInfo detail (as a server's tap handle sends it): its
// delay, a negative one meaning "do not retry"; a status without one has
// no pushback.
func TestPushbackFromRetryInfo(t *testing.T) {
	retryInfo := func(d *durationpb.Duration) protoadapt.MessageV1 {
		return &errdetails.RetryInfo{RetryDelay: d}
	}
	tests := []struct {
		name    string
		details []protoadapt.MessageV1
		want    time.Duration
	}{
		{"delay", []protoadapt.MessageV1{retryInfo(durationpb.New(2 * time.Second))}, 2 * time.Second},
		{"delay of 0", []protoadapt.MessageV1{retryInfo(durationpb.New(0))}, 0},
		{"delay of 1ns", []protoadapt.MessageV1{retryInfo(durationpb.New(time.Nanosecond))}, time.Nanosecond},
		{"negative delay", []protoadapt.MessageV1{retryInfo(durationpb.New(-time.Millisecond))}, resilience.Never},
		{"other details only", []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: "down"}}, 0},
		{"after another detail", []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: "down"}, retryInfo(durationpb.New(time.Second))}, time.Second},
		{"after a RetryInfo without a delay", []protoadapt.MessageV1{retryInfo(nil), retryInfo(durationpb.New(3 * time.Second))}, 3 * time.Second},
	}
	for _, tt := range tests {
		st, err := status.New(codes.Unavailable, "down").WithDetails(tt.details...)
		if err != nil {
			t.Fatalf("%s: WithDetails: %v", tt.name, err)
		}
		invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return st.Err() }
		err = resiliencegrpc.UnaryClientInterceptor(resilience.Policy[any]{})(context.Background(), "/s/m", req("x"), new(testpb.SimpleResponse), nil, invoker)
		var se *resiliencegrpc.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("%s: call error %v, want a *StatusError", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, se.After); diff != "" {
			t.Errorf("%s: pushback mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
