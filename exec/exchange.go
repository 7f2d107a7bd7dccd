package exec

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Exchange runs several copies of a pipeline, each on its own part of
// the input (a table scan split by data files), in parallel goroutines,
// and yields their batches as they come: in no particular order, as SQL
// allows without ORDER BY.
//
// INVARIANT: every input has the same schema. Close stops the workers
// and waits for them, so no goroutine outlives the operator.
type Exchange struct {
	inputs  []Operator
	schema  *arrow.Schema
	metrics Metrics

	ctx    context.Context
	cancel context.CancelFunc
	out    chan exchangeItem
	wg     sync.WaitGroup
	opened bool
	live   int
}

type exchangeItem struct {
	batch arrow.RecordBatch
	err   error
	done  bool
}

var _ Operator = (*Exchange)(nil)

// NewExchange merges inputs run in parallel.
func NewExchange(inputs ...Operator) (*Exchange, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("exec: exchange: no inputs (planner bug)")
	}
	s := inputs[0].Schema()
	for i, in := range inputs[1:] {
		if !in.Schema().Equal(s) {
			return nil, fmt.Errorf("exec: exchange: input %d has schema %s, want %s (planner bug)", i+2, in.Schema(), s)
		}
	}
	return &Exchange{inputs: inputs, schema: s}, nil
}

func (e *Exchange) Schema() *arrow.Schema { return e.schema }
func (e *Exchange) Children() []Operator  { return e.inputs }
func (e *Exchange) Metrics() *Metrics     { return &e.metrics }
func (e *Exchange) String() string {
	return fmt.Sprintf("Exchange (%d parallel inputs)", len(e.inputs))
}

// Open opens every input and starts one worker per input.
func (e *Exchange) Open(ctx context.Context) error {
	e.Close()
	e.ctx, e.cancel = context.WithCancel(ctx)
	for i, in := range e.inputs {
		if err := in.Open(e.ctx); err != nil {
			for _, o := range e.inputs[:i+1] {
				o.Close()
			}
			e.cancel()
			return err
		}
	}
	e.out = make(chan exchangeItem, len(e.inputs))
	e.live = len(e.inputs)
	e.opened = true
	for _, in := range e.inputs {
		e.wg.Add(1)
		go e.work(in)
	}
	return nil
}

func (e *Exchange) work(in Operator) {
	defer e.wg.Done()
	for {
		b, err := in.Next(e.ctx)
		if err == io.EOF {
			e.send(exchangeItem{done: true})
			return
		}
		if err != nil {
			e.send(exchangeItem{err: err})
			return
		}
		if !e.send(exchangeItem{batch: b}) {
			b.Release()
			return
		}
	}
}

// send delivers an item unless the exchange is being closed.
func (e *Exchange) send(it exchangeItem) bool {
	select {
	case e.out <- it:
		return true
	case <-e.ctx.Done():
		return false
	}
}

func (e *Exchange) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for e.opened && e.live > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case it := <-e.out:
			switch {
			case it.err != nil:
				return nil, it.err
			case it.done:
				e.live--
			default:
				e.metrics.Add(it.batch, start)
				return it.batch, nil
			}
		}
	}
	return nil, EOF
}

// Close stops the workers, drains what they sent, and closes the inputs.
func (e *Exchange) Close() error {
	if !e.opened {
		return nil
	}
	e.opened = false
	e.cancel()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	for {
		select {
		case it := <-e.out:
			if it.batch != nil {
				it.batch.Release()
			}
			continue
		case <-done:
		}
		break
	}
	for {
		select {
		case it := <-e.out:
			if it.batch != nil {
				it.batch.Release()
			}
			continue
		default:
		}
		break
	}
	var first error
	for _, in := range e.inputs {
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
