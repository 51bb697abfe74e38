import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** An id: a positive safe integer (spec 2.4: ids increase monotonically). */
export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })

/** A UTC instant with millisecond precision and `Z`, e.g. `2026-07-01T08:30:00.000Z`. */
export const Timestamp = Type.String({ format: 'date-time' })

/** A `YYYY-MM-DD` day, the day as entered in every time zone. */
export const Day = Type.String({ format: 'date' })

/** A string restricted to `values`, as one `enum` so a bad value gets one clear error. */
export function StringEnum<const T extends readonly string[]>(values: T) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] })
}

/** `T | null` for a scalar schema, as a type array (fast to serialize, plain in OpenAPI 3.1). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] })
}

export const IdParams = Type.Object({ id: Id }, { additionalProperties: false })

/** The query of an endpoint that takes no parameters: any parameter is a 422, not silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false })

/** A `Date` as the wire's UTC, millisecond, `Z` timestamp (spec 2.4.2). */
export function timestamp(date: Date): string {
  return date.toISOString()
}
