/**
 * Shared by the ORM core tests: a small blog schema (users, posts, tags through post_tags,
 * comments), a Database wrapper that counts statements (for asserting no N+1), and a helper that
 * opens a backend with an Orm over the counting wrapper.
 */
import type { DataContext, Database, DatabaseHealth, ManyTotals, PreparedStatement, Queryable, QueryManyOptions, QueryOptions, Result, Row, StreamOptions, Transaction, TransactionOptions, Value } from '../../../src/data/index.js';
import { belongsTo, defineModel, field, hasMany, manyToMany, NOW, Orm } from '../../../src/data/orm/index.js';
import type { OpenedBackend } from '../backends.js';

export const User = defineModel('users', {
  id: field.int64().primaryKey().autoIncrement(),
  email: field.string(120).unique(),
  name: field.text().nullable(),
  active: field.bool().default(true),
  createdAt: field.time().default(NOW),
});

export const Post = defineModel(
  'posts',
  {
    id: field.int64().primaryKey().autoIncrement(),
    authorId: field.int64().index(),
    title: field.string(200),
    body: field.text().default(''),
    score: field.int32().default(0),
    version: field.int64(),
  },
  { version: 'version' },
);

export const Tag = defineModel('tags', {
  id: field.int32().primaryKey().autoIncrement(),
  label: field.string(40).unique(),
});

export const PostTag = defineModel('post_tags', { postId: field.int64(), tagId: field.int32() }, { primaryKey: ['postId', 'tagId'] });

export const Comment = defineModel('comments', {
  id: field.int64().primaryKey().autoIncrement(),
  postId: field.int64().index(),
  text: field.text(),
});

export const userPosts = hasMany(User, 'posts', Post, { foreignKey: 'authorId' });
export const postAuthor = belongsTo(Post, 'author', User, { foreignKey: 'authorId' });
export const postTags = manyToMany(Post, 'tags', Tag, { through: PostTag, sourceKey: 'postId', targetKey: 'tagId' });
export const postComments = hasMany(Post, 'comments', Comment, { foreignKey: 'postId' });

export const BLOG = [User, Post, Tag, PostTag, Comment] as const;

/** Statements seen, in order (SQL text), including those inside transactions. */
export class CountingDatabase implements Database {
  readonly statements: string[] = [];
  /** The context each statement was given (same order as `statements`). */
  readonly contexts: (DataContext | undefined)[] = [];
  readonly backend: Database['backend'];

  constructor(private readonly inner: Database) {
    this.backend = inner.backend;
  }

  get count(): number {
    return this.statements.length;
  }

  reset(): void {
    this.statements.length = 0;
    this.contexts.length = 0;
  }

  /** Statements that are not transaction control (BEGIN, COMMIT, SAVEPOINT, ...). */
  get dataStatements(): string[] {
    return this.statements.filter((s) => !/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(s));
  }

  query<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: QueryOptions): Promise<Result<R>> {
    this.statements.push(sql);
    this.contexts.push(ctx);
    return this.inner.query<R>(sql, params, ctx, options);
  }

  prepare<R extends Row = Row>(sql: string, ctx?: DataContext): Promise<PreparedStatement<R>> {
    return this.inner.prepare<R>(sql, ctx);
  }

  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions & { readonly results?: true }): Promise<Result<R>[]>;
  queryMany(sql: string, rows: readonly (readonly Value[])[], ctx: DataContext | undefined, options: QueryManyOptions & { readonly results: false }): Promise<ManyTotals>;
  queryMany<R extends Row = Row>(sql: string, rows: readonly (readonly Value[])[], ctx?: DataContext, options?: QueryManyOptions): Promise<Result<R>[] | ManyTotals> {
    for (let i = 0; i < rows.length; i++) {
      this.statements.push(sql);
      this.contexts.push(ctx);
    }
    return this.inner.queryMany<R>(sql, rows, ctx, options as QueryManyOptions & { readonly results?: true });
  }

  stream<R extends Row = Row>(sql: string, params?: readonly Value[], ctx?: DataContext, options?: StreamOptions): AsyncIterable<R> {
    this.statements.push(sql);
    return this.inner.stream<R>(sql, params, ctx, options);
  }

  ping(ctx?: DataContext): Promise<void> {
    return this.inner.ping(ctx);
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    this.statements.push('BEGIN');
    this.contexts.push(options?.ctx);
    return this.inner.transaction((tx) => fn(this.wrapTx(tx)), options).then(
      (value) => {
        this.statements.push('COMMIT');
        return value;
      },
      (error: unknown) => {
        this.statements.push('ROLLBACK');
        throw error;
      },
    );
  }

  private wrapTx(tx: Transaction): Transaction {
    const statements = this.statements;
    const contexts = this.contexts;
    const wrap = (t: Transaction): Transaction => ({
      backend: t.backend,
      depth: t.depth,
      query: (sql, params, ctx, options) => {
        statements.push(sql);
        contexts.push(ctx);
        return t.query(sql, params, ctx, options);
      },
      prepare: (sql, ctx) => t.prepare(sql, ctx),
      stream: (sql, params, ctx, options) => {
        statements.push(sql);
        return t.stream(sql, params, ctx, options);
      },
      transaction: (fn, options) => {
        statements.push('SAVEPOINT');
        return t.transaction((inner) => fn(wrap(inner)), options);
      },
    });
    return wrap(tx);
  }

  session<T>(fn: (session: Queryable) => Promise<T>, ctx?: DataContext): Promise<T> {
    return this.inner.session(fn, ctx);
  }

  health(): DatabaseHealth {
    return this.inner.health();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface OrmFixture {
  readonly opened: OpenedBackend;
  readonly counting: CountingDatabase;
  readonly orm: Orm;
}

/** Opens the backend, wraps it in a CountingDatabase, creates the blog tables. */
export async function ormFixture(opened: OpenedBackend): Promise<OrmFixture> {
  const counting = new CountingDatabase(opened.db);
  const orm = new Orm(counting);
  await orm.createTables(...BLOG);
  counting.reset();
  return { opened, counting, orm };
}

/** Four users (one inactive with no name, one whose name holds LIKE wildcards) and 1-4 posts each. */
export async function seedUsersAndPosts(orm: Orm): Promise<void> {
  const users = await orm.insertMany(User, [
    { email: 'ada@x', name: 'Ada' },
    { email: 'bob@x', name: 'bob' },
    { email: 'cy@x', name: null, active: false },
    { email: 'dee@x', name: 'Dee_%' },
  ]);
  await orm.insertMany(
    Post,
    users.flatMap((u, i) => Array.from({ length: i + 1 }, (_, j) => ({ authorId: u.id, title: `${u.email}#${j}`, score: (i + 1) * 10 + j }))),
  );
}
