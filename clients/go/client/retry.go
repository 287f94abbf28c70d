package client

// How the client retries one RPC (clients/schedsvc_client/retry.py): exponential backoff with
// full jitter within a budget, and the server's RetryInfo delay when it sends one.

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryPolicy is exponential backoff with full jitter, bounded by a total budget per call.
type RetryPolicy struct {
	InitialBackoff time.Duration // 50ms
	MaxBackoff     time.Duration // 2s
	Multiplier     float64       // 2
	Budget         time.Duration // 60s: the whole call, retries and resyncs included
	MaxResyncs     int           // 5 per call: a server restarting in a loop must not spin us
	ReplayChunk    int           // 5000 items per replay message
}

// DefaultRetryPolicy is the Python client's RetryPolicy().
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Multiplier: 2, Budget: 60 * time.Second, MaxResyncs: 5, ReplayChunk: 5000}
}

// ErrResync is the server changing under us (restarts) beyond the policy's resync budget.
var ErrResync = errors.New("schedsvc: the server kept restarting; giving up")

func retryable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.ResourceExhausted
}

// RetryDelay is the server's google.rpc.RetryInfo delay, if err carries one.
func RetryDelay(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return 0, false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok && info.GetRetryDelay() != nil {
			return info.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// callWithRetry runs one RPC with backoff on UNAVAILABLE / RESOURCE_EXHAUSTED until deadline;
// timeout (0: none) bounds each attempt.
func callWithRetry[T any](
	ctx context.Context, p RetryPolicy, deadline time.Time, timeout time.Duration,
	fn func(context.Context) (T, error),
) (T, error) {
	backoff := p.InitialBackoff
	for {
		attempt, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			attempt, cancel = context.WithTimeout(ctx, timeout)
		}
		resp, err := fn(attempt)
		cancel()
		if err == nil {
			return resp, nil
		}
		code := status.Code(err)
		now := time.Now()
		if !retryable(code) || !now.Before(deadline) || ctx.Err() != nil {
			return resp, err
		}
		delay, ok := time.Duration(0), false
		if code == codes.ResourceExhausted {
			delay, ok = RetryDelay(err)
		}
		if !ok {
			delay = time.Duration(rand.Float64() * float64(backoff))
			backoff = min(time.Duration(float64(backoff)*p.Multiplier), p.MaxBackoff)
		}
		delay = max(0, min(delay, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			return resp, ctx.Err()
		case <-time.After(delay):
		}
	}
}
