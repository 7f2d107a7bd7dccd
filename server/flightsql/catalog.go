package flightsql

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
)

// catalogName is the one catalog a lake is.
const catalogName = "skade"

func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return flightInfo(desc.Cmd, desc, schema_ref.Catalogs, s.Alloc), nil
}

func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.Alloc, schema_ref.Catalogs)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(catalogName)
	return oneBatch(b)
}

func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return flightInfo(desc.Cmd, desc, schema_ref.TableTypes, s.Alloc), nil
}

func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.Alloc, schema_ref.TableTypes)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("TABLE")
	return oneBatch(b)
}

func (s *Server) GetFlightInfoSchemas(_ context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return flightInfo(desc.Cmd, desc, schema_ref.DBSchemas, s.Alloc), nil
}

func (s *Server) DoGetDBSchemas(ctx context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	nss, err := s.cfg.Lake.Namespaces(ctx)
	if err != nil {
		return nil, nil, grpcError(err)
	}
	b := array.NewRecordBuilder(s.Alloc, schema_ref.DBSchemas)
	defer b.Release()
	if c := cmd.GetCatalog(); c == nil || *c == catalogName {
		for _, ns := range nss {
			if matches(cmd.GetDBSchemaFilterPattern(), ns) {
				b.Field(0).(*array.StringBuilder).Append(catalogName)
				b.Field(1).(*array.StringBuilder).Append(ns)
			}
		}
	}
	return oneBatch(b)
}

func (s *Server) GetFlightInfoTables(_ context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	return flightInfo(desc.Cmd, desc, schema, s.Alloc), nil
}

func (s *Server) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	b := array.NewRecordBuilder(s.Alloc, schema)
	defer b.Release()
	types := cmd.GetTableTypes()
	wantTables := len(types) == 0
	for _, t := range types {
		wantTables = wantTables || strings.EqualFold(t, "TABLE")
	}
	if c := cmd.GetCatalog(); (c == nil || *c == catalogName) && wantTables {
		names, err := s.cfg.Lake.Tables(ctx)
		if err != nil {
			return nil, nil, grpcError(err)
		}
		sort.Strings(names)
		for _, full := range names {
			ns, name := "main", full
			if i := strings.LastIndexByte(full, '.'); i >= 0 {
				ns, name = full[:i], full[i+1:]
			}
			if !matches(cmd.GetDBSchemaFilterPattern(), ns) || !matches(cmd.GetTableNameFilterPattern(), name) {
				continue
			}
			b.Field(0).(*array.StringBuilder).Append(catalogName)
			b.Field(1).(*array.StringBuilder).Append(ns)
			b.Field(2).(*array.StringBuilder).Append(name)
			b.Field(3).(*array.StringBuilder).Append("TABLE")
			if cmd.GetIncludeSchema() {
				tbl, err := s.cfg.Lake.Table(ctx, full)
				if err != nil {
					return nil, nil, grpcError(err)
				}
				b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(tbl.Schema(), s.Alloc))
			}
		}
	}
	return oneBatch(b)
}

// matches applies a Flight SQL filter pattern (SQL LIKE: % and _).
func matches(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	var re strings.Builder
	re.WriteString("^")
	for _, r := range *pattern {
		switch r {
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	ok, err := regexp.MatchString(re.String(), s)
	return err == nil && ok
}

// oneBatch streams the builder's rows as one batch.
func oneBatch(b *array.RecordBuilder) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	rec := b.NewRecordBatch()
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return rec.Schema(), ch, nil
}
