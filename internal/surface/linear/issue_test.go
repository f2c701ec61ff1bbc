package linear_test

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/processor"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
)

type starterFunc func(ctx context.Context, org, issue string) (bool, error)

func (f starterFunc) StartIssue(ctx context.Context, org, issue string) (bool, error) {
	return f(ctx, org, issue)
}

// retryErr is an error that says whether retrying may help, as
// *surface.Error does.
type retryErr bool

func (e retryErr) Error() string   { return "linear failed" }
func (e retryErr) Retryable() bool { return bool(e) }

func TestStartIssueWorker(t *testing.T) {
	t.Parallel()
	args := surfacelinear.StartIssueArgs{OrganizationID: "org-1", IssueID: "issue-1"}
	tests := []struct {
		name       string
		err        error
		wantErr    bool
		wantCancel bool
	}{
		{"Moved", nil, false, false},
		{"RetryableIsRetried", retryErr(true), true, false},
		{"PermanentIsCancelled", retryErr(false), true, true},
		{"UnknownIsRetried", errors.New("network"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got surfacelinear.StartIssueArgs
			w := surfacelinear.NewStartIssueWorker(starterFunc(func(_ context.Context, org, issue string) (bool, error) {
				got = surfacelinear.StartIssueArgs{OrganizationID: org, IssueID: issue}
				return tt.err == nil, tt.err
			}), dbtest.Logger(t))
			err := w.Work(t.Context(), &river.Job[surfacelinear.StartIssueArgs]{Args: args})
			require.Equal(t, args, got)
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var cancel *river.JobCancelError
			require.Equal(t, tt.wantCancel, errors.As(err, &cancel))
		})
	}
}

// The Linear sender is both the processor's Sender for Linear and the
// start-issue worker's starter.
var (
	_ processor.Sender           = (*linearapi.Sender)(nil)
	_ surfacelinear.IssueStarter = (*linearapi.Sender)(nil)
)
