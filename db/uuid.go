package db

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Configure readies a pool's configuration for weft's queries: every
// connection learns uuid.UUID (registerUUID). Open applies it; a pool
// opened otherwise (a test's counting pool) applies it too, so that it
// runs what production runs.
func Configure(cfg *pgxpool.Config) {
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		registerUUID(conn.TypeMap())
		if after != nil {
			return after(ctx, conn)
		}
		return nil
	}
}

// registerUUID teaches m uuid.UUID, the type of every id weft stores.
// pgx knows it only as a driver.Valuer and a sql.Scanner: it encoded each
// one by formatting it as text, failing to encode that text as a binary
// uuid (an error built with fmt), parsing it back and encoding the result;
// it scanned each by formatting the 16 bytes as text for uuid.UUID's Scan
// to parse. With a dozen ids a new session, that was a tenth of weft
// serve's CPU under `weft bench linear`. The uuid[] type is registered
// again too, so that its elements take the same way.
func registerUUID(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
	m.RegisterDefaultPgType(uuid.UUID{}, "uuid")
}

// uuidCodec is pgx's uuid codec, plus uuid.UUID and *uuid.UUID (NULL when
// nil) as values and *uuid.UUID as a target.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case uuid.UUID, *uuid.UUID:
		return uuidEncodePlan{text: format == pgtype.TextFormatCode}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		return uuidScanPlan{text: format == pgtype.TextFormatCode}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type uuidEncodePlan struct{ text bool }

func (p uuidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	var u uuid.UUID
	switch v := value.(type) {
	case uuid.UUID:
		u = v
	case *uuid.UUID:
		if v == nil {
			return nil, nil
		}
		u = *v
	default:
		return nil, fmt.Errorf("encode uuid: unexpected %T", value)
	}
	if p.text {
		return append(buf, u.String()...), nil
	}
	return append(buf, u[:]...), nil
}

type uuidScanPlan struct{ text bool }

func (p uuidScanPlan) Scan(src []byte, dst any) error {
	u := dst.(*uuid.UUID)
	switch {
	case src == nil:
		// NULL leaves the target as it is, as uuid.UUID's Scan does.
		return nil
	case p.text:
		parsed, err := uuid.ParseBytes(src)
		if err != nil {
			return fmt.Errorf("scan uuid: %w", err)
		}
		*u = parsed
	case len(src) != len(u):
		return fmt.Errorf("scan uuid: %d bytes", len(src))
	default:
		copy(u[:], src)
	}
	return nil
}
