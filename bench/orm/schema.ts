/**
 * The orm suite's schema, declared for each implementation: authors → posts → comments, plus a
 * separate `ins_posts` table for the insert case. The tables are created once with Molo's dialect
 * DDL; Molo's ORM, Molo's raw client and drizzle-orm all read and write those same tables.
 */
import { relations } from 'drizzle-orm';
import { bigint, boolean as pgBoolean, integer as pgInteger, pgTable, text as pgText, varchar } from 'drizzle-orm/pg-core';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { defineModel, field, hasMany } from '../../src/data/orm/index.js';

// ---- Molo ----

export const Author = defineModel('authors', {
  id: field.int64().primaryKey().autoIncrement(),
  name: field.text(),
  active: field.bool(),
});

export const Post = defineModel('posts', {
  id: field.int64().primaryKey().autoIncrement(),
  author_id: field.int64().index(),
  title: field.string(200),
  score: field.int32(),
});

export const Comment = defineModel('comments', {
  id: field.int64().primaryKey().autoIncrement(),
  post_id: field.int64().index(),
  body: field.text(),
});

/** The insert case's table: the same columns as posts. */
export const InsPost = defineModel('ins_posts', {
  id: field.int64().primaryKey().autoIncrement(),
  author_id: field.int64(),
  title: field.string(200),
  score: field.int32(),
});

export const authorPosts = hasMany(Author, 'posts', Post, { foreignKey: 'author_id' });
export const postComments = hasMany(Post, 'comments', Comment, { foreignKey: 'post_id' });

export const MODELS = [Author, Post, Comment, InsPost] as const;

// ---- drizzle, Postgres ----

export const pgAuthors = pgTable('authors', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
  name: pgText('name').notNull(),
  active: pgBoolean('active').notNull(),
});
export const pgPosts = pgTable('posts', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
  author_id: bigint('author_id', { mode: 'bigint' }).notNull(),
  title: varchar('title', { length: 200 }).notNull(),
  score: pgInteger('score').notNull(),
});
export const pgComments = pgTable('comments', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
  post_id: bigint('post_id', { mode: 'bigint' }).notNull(),
  body: pgText('body').notNull(),
});
export const pgInsPosts = pgTable('ins_posts', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
  author_id: bigint('author_id', { mode: 'bigint' }).notNull(),
  title: varchar('title', { length: 200 }).notNull(),
  score: pgInteger('score').notNull(),
});
export const pgAuthorsRelations = relations(pgAuthors, ({ many }) => ({ posts: many(pgPosts) }));
export const pgPostsRelations = relations(pgPosts, ({ one, many }) => ({
  author: one(pgAuthors, { fields: [pgPosts.author_id], references: [pgAuthors.id] }),
  comments: many(pgComments),
}));
export const pgCommentsRelations = relations(pgComments, ({ one }) => ({ post: one(pgPosts, { fields: [pgComments.post_id], references: [pgPosts.id] }) }));
export const PG_SCHEMA = { pgAuthors, pgPosts, pgComments, pgInsPosts, pgAuthorsRelations, pgPostsRelations, pgCommentsRelations };

// ---- drizzle, SQLite ----

export const liteAuthors = sqliteTable('authors', {
  id: integer('id', { mode: 'number' }).primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  active: integer('active', { mode: 'boolean' }).notNull(),
});
export const litePosts = sqliteTable('posts', {
  id: integer('id', { mode: 'number' }).primaryKey({ autoIncrement: true }),
  author_id: integer('author_id', { mode: 'number' }).notNull(),
  title: text('title').notNull(),
  score: integer('score', { mode: 'number' }).notNull(),
});
export const liteComments = sqliteTable('comments', {
  id: integer('id', { mode: 'number' }).primaryKey({ autoIncrement: true }),
  post_id: integer('post_id', { mode: 'number' }).notNull(),
  body: text('body').notNull(),
});
export const liteInsPosts = sqliteTable('ins_posts', {
  id: integer('id', { mode: 'number' }).primaryKey({ autoIncrement: true }),
  author_id: integer('author_id', { mode: 'number' }).notNull(),
  title: text('title').notNull(),
  score: integer('score', { mode: 'number' }).notNull(),
});
export const liteAuthorsRelations = relations(liteAuthors, ({ many }) => ({ posts: many(litePosts) }));
export const litePostsRelations = relations(litePosts, ({ one, many }) => ({
  author: one(liteAuthors, { fields: [litePosts.author_id], references: [liteAuthors.id] }),
  comments: many(liteComments),
}));
export const liteCommentsRelations = relations(liteComments, ({ one }) => ({ post: one(litePosts, { fields: [liteComments.post_id], references: [litePosts.id] }) }));
export const LITE_SCHEMA = { liteAuthors, litePosts, liteComments, liteInsPosts, liteAuthorsRelations, litePostsRelations, liteCommentsRelations };

/** Dataset sizes: authors, posts per author, comments per post. Every other author is active. */
export interface Dataset {
  readonly authors: number;
  readonly postsPerAuthor: number;
  readonly commentsPerPost: number;
}
