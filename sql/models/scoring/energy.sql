-- Energy model, version energy/1 (docs/models.md): grams of CO2 a trip saved against a reference
-- car emitting 150 g/km. Smooth driving saves up to 8 %; every hard brake or hard acceleration per
-- km costs 2 points of that share. Never negative.
create or replace temp macro energy_model_version() as 'energy/1';

create or replace temp macro energy_grams(mileage_m, harsh_events) as
    cast(round(
        (mileage_m / 1000.0) * 150.0
        * greatest(0.0, 0.08 - 0.02 * coalesce(harsh_events, 0) / greatest(mileage_m / 1000.0, 0.1))
    ) as bigint);
