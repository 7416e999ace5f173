import { openDatabase } from "@flotilla/store";
const db = await openDatabase({ url: "postgres://postgres@127.0.0.1:5432/flotilla_scratch" });
console.log(await db.sql`SELECT name FROM schema_migrations`);
console.log(await db.sql`SELECT pg_current_xact_id()::text::bigint AS x`);
await db.close();
