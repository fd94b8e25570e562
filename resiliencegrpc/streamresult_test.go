package resiliencegrpc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// What the stream client interceptor makes of the policy's result, seen
// through a fake streamer.

// A layer that makes up a result cannot make a stream: the caller gets an
// Internal error naming the result's type.
func TestStreamMadeUpResultIsInternal(t *testing.T) {
	made := resilience.Fallback(func(context.Context, error) (any, error) { return "cached", nil })
	streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		return nil, status.Error(codes.Unavailable, "down")
	}
	s, err := resiliencegrpc.StreamClientInterceptor(made)(context.Background(), &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
	if s != nil || status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "string") {
		t.Errorf("interceptor returned %v, %v; want no stream and an Internal error naming the string the policy returned", s, err)
	}
}
