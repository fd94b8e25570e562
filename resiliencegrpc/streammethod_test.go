package resiliencegrpc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// openStream is a grpc.ClientStream whose server has answered with its
// headers: the stream is committed at once.
type openStream struct {
	grpc.ClientStream // nil: the methods below are the ones the interceptor uses
	ctx               context.Context
}

func (s *openStream) Header() (metadata.MD, error) { return metadata.MD{}, nil }
func (s *openStream) Context() context.Context     { return s.ctx }
func (s *openStream) Trailer() metadata.MD         { return nil }

// A stream of a method given its own policy with WithMethod goes through
// that policy; the other methods' through the interceptor's.
func TestStreamPerMethodPolicy(t *testing.T) {
	errShut := errors.New("shut")
	shut := resilience.New("shut", func(context.Context, resilience.Next[any]) (any, error) { return nil, errShut })
	streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		return &openStream{ctx: ctx}, nil
	}
	open := resiliencegrpc.StreamClientInterceptor(shut, resiliencegrpc.WithMethod("/s/open", resilience.Policy[any]{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	desc := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
	_, openErr := open(ctx, desc, nil, "/s/open", streamer)
	_, shutErr := open(ctx, desc, nil, "/s/shut", streamer)
	if diff := cmp.Diff([]codes.Code{codes.OK, codes.Unknown}, []codes.Code{status.Code(openErr), status.Code(shutErr)}); diff != "" {
		t.Errorf("codes of the method with its own policy, of another mismatch (-want +got):\n%s", diff)
	}
	if !errors.Is(shutErr, errShut) {
		t.Errorf("other method's error %v, want the interceptor's policy's", shutErr)
	}
}
