-- The cell of each driver of the file being split.
create or replace temp table split_cells (app_id varchar, user_id bigint, cell varchar);
